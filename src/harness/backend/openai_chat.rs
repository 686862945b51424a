//! `--server-api chat`: a round sent to a server's `POST /v1/chat/completions` as chat messages
//! with the tools it offers, so the server renders the prompt with the model's own template and
//! reads calls with its own parser (llama-server `--jinja`, vLLM); its `tool_calls` come back
//! written in the harness's call syntax, so the loop and the laws read them as any reply.

use anyhow::bail;
use serde_json::{json, Map, Value};

use super::{ChatRound, FinishReason};
use crate::harness::template::Role;
use crate::harness::toolcall::{self, render::render_call, CallFormat};

/// The round's messages in the chat API's shapes. The assistant's earlier replies are read
/// with the harness's parser: their calls go as `tool_calls`, each with an id that the tool
/// results after it answer in turn; a result with no call left to answer has none.
pub fn messages(chat: &ChatRound) -> Value {
    let mut shaped = Vec::with_capacity(chat.messages.len());
    let mut unanswered: std::collections::VecDeque<String> = Default::default();
    let mut next_id = 0;
    for message in &chat.messages {
        match message.role {
            Role::Assistant => {
                let parsed = toolcall::parse(chat.format, &message.content);
                if parsed.calls.is_empty() {
                    shaped.push(json!({"role": "assistant", "content": message.content}));
                    continue;
                }
                let calls: Vec<Value> = parsed
                    .calls
                    .iter()
                    .map(|call| {
                        next_id += 1;
                        let id = format!("call_{next_id}");
                        unanswered.push_back(id.clone());
                        json!({
                            "id": id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": Value::Object(call.arguments.clone()).to_string(),
                            },
                        })
                    })
                    .collect();
                shaped.push(json!({
                    "role": "assistant",
                    "content": parsed.prose.trim(),
                    "tool_calls": calls,
                }));
            }
            Role::Tool => {
                let mut result = json!({"role": "tool", "content": message.content});
                if let Some(id) = unanswered.pop_front() {
                    result["tool_call_id"] = json!(id);
                }
                shaped.push(result);
            }
            role => {
                unanswered.clear();
                shaped.push(json!({"role": role.name(), "content": message.content}));
            }
        }
    }
    Value::Array(shaped)
}

/// The tools in the chat API's shape.
pub fn tools(chat: &ChatRound) -> Value {
    chat.tools
        .iter()
        .map(|(name, description, parameters)| {
            json!({"type": "function", "function": {
                "name": name, "description": description, "parameters": parameters,
            }})
        })
        .collect()
}

/// The reply of a chat completion as the harness reads replies: the content, then each of
/// `tool_calls` written in `format` (a call whose arguments are not a JSON object is kept as
/// text, so the transcript shows it and no call is made of it); and how it ended.
pub fn reply(
    answer: &Value,
    format: CallFormat,
    url: &str,
) -> anyhow::Result<(String, FinishReason)> {
    let choice = &answer["choices"][0];
    let message = &choice["message"];
    if !message.is_object() {
        bail!("{url}: the answer has no choices[0].message");
    }
    let mut parts: Vec<String> = Vec::new();
    if let Some(content) = message["content"].as_str().filter(|c| !c.trim().is_empty()) {
        parts.push(content.trim().to_string());
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let function = &call["function"];
        let name = function["name"].as_str().unwrap_or_default();
        let arguments = match &function["arguments"] {
            Value::String(text) => serde_json::from_str::<Value>(text).ok(),
            other => Some(other.clone()),
        };
        match arguments {
            Some(Value::Object(arguments)) => parts.push(render_call(format, name, &arguments)),
            Some(Value::Null) => parts.push(render_call(format, name, &Map::new())),
            _ => parts.push(format!("{name}({})", function["arguments"])),
        }
    }
    let finish = match choice["finish_reason"].as_str() {
        Some("length") => FinishReason::MaxTokens,
        _ => FinishReason::Eos,
    };
    Ok((parts.join("\n"), finish))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::template::Message;

    /// Truth: answers written here in the shape of llama-server's `/v1/chat/completions`
    /// (`tool_calls` with `arguments` as a JSON string); the one with arguments that are no
    /// JSON object must make no call.
    #[test]
    fn tool_calls_come_back_in_the_harness_syntax() {
        let answer = json!({"choices": [{"finish_reason": "tool_calls", "index": 0, "message": {
            "role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {
                "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}, "id": "abc"}]}}]});
        let (text, finish) = reply(&answer, CallFormat::JsonTag, "u").unwrap();
        assert_eq!(finish, FinishReason::Eos);
        let parsed = toolcall::parse(CallFormat::JsonTag, &text);
        assert_eq!(parsed.calls.len(), 1, "{text}");
        assert_eq!(parsed.calls[0].name, "get_weather");
        assert_eq!(parsed.calls[0].arguments["city"], "Paris");

        let broken = json!({"choices": [{"finish_reason": "length", "message": {
            "content": "Let me see.", "tool_calls": [{"function": {
                "name": "get_weather", "arguments": "{\"city\": "}}]}}]});
        let (text, finish) = reply(&broken, CallFormat::Markup, "u").unwrap();
        assert_eq!(finish, FinishReason::MaxTokens);
        assert!(text.starts_with("Let me see."), "{text}");
        assert!(
            toolcall::parse(CallFormat::Markup, &text).calls.is_empty(),
            "{text}"
        );
        assert!(reply(&json!({"choices": []}), CallFormat::Markup, "u").is_err());
    }

    /// Truth: a change. An earlier call goes back as `tool_calls`, its result answers its id.
    #[test]
    fn earlier_calls_go_back_as_tool_calls_with_their_results() {
        let call = render_call(
            CallFormat::JsonTag,
            "get_weather",
            json!({"city": "Oslo"}).as_object().unwrap(),
        );
        let chat = ChatRound {
            messages: vec![
                Message::system("s"),
                Message::user("weather in Oslo?"),
                Message::assistant(call),
                Message::new(Role::Tool, "4 °C"),
            ],
            tools: vec![("get_weather".into(), "d".into(), json!({"type": "object"}))],
            format: CallFormat::JsonTag,
        };
        let shaped = messages(&chat);
        assert_eq!(
            shaped[2]["tool_calls"][0]["function"]["name"],
            "get_weather"
        );
        assert_eq!(
            shaped[2]["tool_calls"][0]["function"]["arguments"],
            "{\"city\":\"Oslo\"}"
        );
        assert_eq!(shaped[3]["tool_call_id"], shaped[2]["tool_calls"][0]["id"]);
        assert_eq!(shaped[3]["role"], "tool");
        assert_eq!(tools(&chat)[0]["function"]["name"], "get_weather");
    }
}
