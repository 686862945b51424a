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
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Gemma, Family::ChatMl, Family::Llama3];

    pub fn name(self) -> &'static str {
        match self {
            Family::Gemma => "gemma",
            Family::ChatMl => "chatml",
            Family::Llama3 => "llama3",
        }
    }

    pub fn parse(name: &str) -> Option<Family> {
        match name.to_ascii_lowercase().as_str() {
            "gemma" => Some(Family::Gemma),
            "chatml" | "qwen" => Some(Family::ChatMl),
            "llama3" | "llama-3" => Some(Family::Llama3),
            _ => None,
        }
    }

    /// Recognises the family from GGUF metadata: the embedded chat template when there is one,
    /// otherwise `general.architecture` and `general.name`.
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
        }
    }

    /// Strings that end the model's turn, for use as stop strings.
    pub fn end_of_turn(self) -> &'static [&'static str] {
        match self {
            Family::Gemma => &["<end_of_turn>", "<start_of_turn>"],
            Family::ChatMl => &["<|im_end|>", "<|im_start|>"],
            Family::Llama3 => &["<|eot_id|>", "<|start_header_id|>"],
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
    }
    out
}
