//! Chat formatting per model family: messages in, prompt text with the family's special tokens out.

use serde::{Deserialize, Serialize};

use super::toolcall::CallFormat;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Gemma 2/3: `<start_of_turn>user … <end_of_turn>`, no system role.
    Gemma,
    /// ChatML (Qwen and many fine-tunes): `<|im_start|>role … <|im_end|>`.
    ChatMl,
    /// Llama 3: `<|start_header_id|>role<|end_header_id|> … <|eot_id|>`.
    Llama3,
    /// A plain `User:` / `Assistant:` transcript with no special turn tokens: for base models,
    /// which continue a written exchange far better than they follow a chat format they never
    /// learned.
    Transcript,
}

impl Family {
    pub const ALL: [Family; 4] = [
        Family::Gemma,
        Family::ChatMl,
        Family::Llama3,
        Family::Transcript,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Gemma => "gemma",
            Family::ChatMl => "chatml",
            Family::Llama3 => "llama3",
            Family::Transcript => "transcript",
        }
    }

    pub fn parse(name: &str) -> Option<Family> {
        match name.to_ascii_lowercase().as_str() {
            "gemma" => Some(Family::Gemma),
            "chatml" | "qwen" => Some(Family::ChatMl),
            "llama3" | "llama-3" => Some(Family::Llama3),
            "transcript" | "plain" => Some(Family::Transcript),
            _ => None,
        }
    }

    /// Recognises the chat format from GGUF metadata: the embedded chat template when there is
    /// one. A model without a template whose name does not say it was tuned to chat
    /// (`instruct`, `-it`, `chat`) is a base model, spoken to in a plain transcript. Otherwise
    /// `general.architecture` and `general.name` decide.
    pub fn detect(
        architecture: &str,
        model_name: &str,
        chat_template: Option<&str>,
    ) -> Option<Family> {
        if let Some(t) = chat_template {
            if t.contains("<start_of_turn>") {
                return Some(Family::Gemma);
            }
            if t.contains("<|im_start|>") {
                return Some(Family::ChatMl);
            }
            if t.contains("<|start_header_id|>") {
                return Some(Family::Llama3);
            }
        }
        let arch = architecture.to_ascii_lowercase();
        let name = model_name.to_ascii_lowercase();
        let tuned_to_chat = name.contains("instruct")
            || name.contains("chat")
            || name.ends_with("-it")
            || name.ends_with(" it")
            || name.contains("-it-")
            || name.contains(" it ");
        if chat_template.is_none() && !tuned_to_chat {
            return Some(Family::Transcript);
        }
        if arch.starts_with("gemma") || name.contains("gemma") {
            Some(Family::Gemma)
        } else if arch.starts_with("qwen") || name.contains("qwen") {
            Some(Family::ChatMl)
        } else if arch == "llama"
            && (name.contains("llama-3") || name.contains("llama 3") || name.contains("llama3"))
        {
            Some(Family::Llama3)
        } else {
            None
        }
    }

    /// The tool-call format a family's models are most likely to produce.
    pub fn default_call_format(self) -> CallFormat {
        match self {
            Family::Gemma => CallFormat::Markup,
            Family::ChatMl => CallFormat::JsonTag,
            Family::Llama3 => CallFormat::Markup,
            Family::Transcript => CallFormat::Markup,
        }
    }

    /// Strings that end the model's turn, for use as stop strings.
    pub fn end_of_turn(self) -> &'static [&'static str] {
        match self {
            Family::Gemma => &["<end_of_turn>", "<start_of_turn>"],
            Family::ChatMl => &["<|im_end|>", "<|im_start|>"],
            Family::Llama3 => &["<|eot_id|>", "<|start_header_id|>"],
            Family::Transcript => &[
                "\nUser:",
                "\nTool:",
                "\nAssistant:",
                "\nuser:",
                "\ntool:",
                "<end_of_turn>",
            ],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result, shown to the model.
    Tool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
        }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
    pub fn tool(content: impl Into<String>) -> Self {
        Self::new(Role::Tool, content)
    }
}

/// Renders messages in the family's chat format, ending with the opener of the model's turn.
pub fn render(family: Family, messages: &[Message]) -> String {
    let mut out = String::new();
    match family {
        Family::Gemma => {
            // Gemma has no system role: the system text opens the first user turn.
            out.push_str("<bos>");
            let mut pending_system = String::new();
            for m in messages {
                match m.role {
                    Role::System => {
                        pending_system.push_str(&m.content);
                        pending_system.push_str("\n\n");
                    }
                    Role::User | Role::Tool => {
                        out.push_str("<start_of_turn>user\n");
                        out.push_str(&std::mem::take(&mut pending_system));
                        if m.role == Role::Tool {
                            out.push_str("Tool result:\n");
                        }
                        out.push_str(m.content.trim_end());
                        out.push_str("<end_of_turn>\n");
                    }
                    Role::Assistant => {
                        out.push_str("<start_of_turn>model\n");
                        out.push_str(m.content.trim_end());
                        out.push_str("<end_of_turn>\n");
                    }
                }
            }
            out.push_str("<start_of_turn>model\n");
        }
        Family::ChatMl => {
            for m in messages {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                };
                out.push_str(&format!(
                    "<|im_start|>{role}\n{}<|im_end|>\n",
                    m.content.trim_end()
                ));
            }
            out.push_str("<|im_start|>assistant\n");
        }
        Family::Llama3 => {
            out.push_str("<|begin_of_text|>");
            for m in messages {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "ipython",
                };
                out.push_str(&format!(
                    "<|start_header_id|>{role}<|end_header_id|>\n\n{}<|eot_id|>",
                    m.content.trim()
                ));
            }
            out.push_str("<|start_header_id|>assistant<|end_header_id|>\n\n");
        }
        Family::Transcript => {
            out.push_str("<bos>");
            for m in messages {
                let speaker = match m.role {
                    Role::System => {
                        out.push_str(m.content.trim());
                        out.push_str("\n\n");
                        continue;
                    }
                    Role::User => "User",
                    Role::Assistant => "Assistant",
                    Role::Tool => "Tool",
                };
                out.push_str(&format!("{speaker}: {}\n", m.content.trim()));
            }
            out.push_str("Assistant:");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::backend::llama::first_stop;

    /// One of each role, with the stray whitespace a model's reply and a tool's output carry.
    fn conversation() -> Vec<Message> {
        vec![
            Message::system("You are a helpful assistant."),
            Message::user("What time is it in Paris?"),
            Message::assistant(
                "<function=city_time>\n<parameter=city>\nParis\n</parameter>\n</function>\n",
            ),
            Message::tool("city_time returned:\nIt is 14:05 in Paris.\n\n"),
        ]
    }

    /// How each family opens the model's turn; a match, so a new family must say.
    fn model_turn_opener(family: Family) -> &'static str {
        match family {
            Family::Gemma => "<start_of_turn>model\n",
            Family::ChatMl => "<|im_start|>assistant\n",
            Family::Llama3 => "<|start_header_id|>assistant<|end_header_id|>\n\n",
            Family::Transcript => "Assistant:",
        }
    }

    #[test]
    fn each_family_renders_a_whole_conversation() {
        for family in Family::ALL {
            insta::assert_snapshot!(
                format!("render_{}", family.name()),
                render(family, &conversation())
            );
        }
    }

    #[test]
    fn every_prompt_ends_by_opening_the_model_turn() {
        for family in Family::ALL {
            let opener = model_turn_opener(family);
            assert!(
                render(family, &conversation()).ends_with(opener),
                "{family:?}"
            );
            assert!(render(family, &[]).ends_with(opener), "{family:?}");
        }
    }

    #[test]
    fn stop_strings_end_a_reply_exactly_where_the_template_ends_it() {
        for family in Family::ALL {
            let before = render(family, &conversation());
            let mut longer = conversation();
            longer.push(Message::assistant("It is 14:05."));
            longer.push(Message::user("Thanks."));
            let after = render(family, &longer);
            // History only grows at the end: the earlier prompt is a prefix of the later one.
            let continuation = after
                .strip_prefix(before.as_str())
                .unwrap_or_else(|| panic!("{family:?}: the earlier prompt is not a prefix"));
            // A model that writes its turn the way the template does is cut right after it.
            let stops: Vec<String> = family.end_of_turn().iter().map(|s| s.to_string()).collect();
            let (at, _) = first_stop(continuation, &stops)
                .unwrap_or_else(|| panic!("{family:?}: no stop string ends the turn"));
            assert_eq!(continuation[..at].trim(), "It is 14:05.", "{family:?}");
        }
    }

    #[test]
    fn gemma_puts_the_system_text_at_the_top_of_the_first_user_turn_only() {
        let prompt = render(
            Family::Gemma,
            &[
                Message::system("RULES"),
                Message::user("one"),
                Message::assistant("two"),
                Message::user("three"),
            ],
        );
        assert_eq!(prompt.matches("RULES").count(), 1);
        assert!(prompt.starts_with("<bos><start_of_turn>user\nRULES\n\none<end_of_turn>\n"));
        assert!(!prompt.contains("system"), "Gemma has no system role");
    }

    #[test]
    fn tool_results_take_each_family_s_tool_turn() {
        let tool = [Message::tool("42")];
        for family in Family::ALL {
            let expected = match family {
                Family::Gemma => "<start_of_turn>user\nTool result:\n42<end_of_turn>",
                Family::ChatMl => "<|im_start|>tool\n42<|im_end|>",
                Family::Llama3 => "<|start_header_id|>ipython<|end_header_id|>\n\n42<|eot_id|>",
                Family::Transcript => "Tool: 42\n",
            };
            assert!(render(family, &tool).contains(expected), "{family:?}");
        }
    }

    #[test]
    fn a_model_without_a_chat_template_is_spoken_to_in_a_transcript() {
        // The default model's metadata: Gemma 3 270M base has no template.
        assert_eq!(
            Family::detect("gemma3", "Gemma 3 270m", None),
            Some(Family::Transcript)
        );
        assert_eq!(
            Family::detect("llama", "Llama-3.2-1B", None),
            Some(Family::Transcript)
        );
        // SmolLM2-135M-Instruct carries a ChatML template.
        assert_eq!(
            Family::detect(
                "llama",
                "Smollm2 135M 8k Lc100K Mix1 Ep2",
                Some("{{'<|im_start|>' + message['role']}}")
            ),
            Some(Family::ChatMl)
        );
    }

    #[test]
    fn families_are_recognised_from_templates_before_names() {
        assert_eq!(
            Family::detect("llama", "Llama 3.2 1B", Some("{{ '<|im_start|>' }}")),
            Some(Family::ChatMl)
        );
        // Tuned to chat but shipped without a template: the name decides.
        assert_eq!(
            Family::detect("gemma3", "Gemma 3 270m It", None),
            Some(Family::Gemma)
        );
        assert_eq!(
            Family::detect("llama", "Llama-3.2-1B-Instruct", None),
            Some(Family::Llama3)
        );
        assert_eq!(Family::detect("llama", "TinyLlama Chat", None), None);
        for family in Family::ALL {
            assert_eq!(Family::parse(family.name()), Some(family));
        }
    }
}
