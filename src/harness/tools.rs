//! Tool definitions and the registry the loop offers to the model.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The longest tool name: what every call syntax the harness reads can express (the markup
/// syntax reads a name of 1–64 characters).
pub const TOOL_NAME_MAX: usize = 64;

/// What a tool may be called, checked once where a pack is loaded and by `lint` and `init`, by
/// this one rule: 1–64 characters, an ASCII letter or `_` first, then ASCII letters, digits,
/// `_`, `-` and `.`; and no built-in tool's name (`builtins::BUILT_IN_TOOLS`), which
/// the harness offers itself. Every call syntax can then write the name, and the name is a
/// folder name as it stands (no separator, never `.` or `..`).
pub fn check_tool_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !first_ok || !rest_ok {
        return Err(format!(
            "{name:?} is not a tool name: use an ASCII letter or `_` first, then ASCII letters, digits, `_`, `-` and `.` (no spaces, no `/`)"
        ));
    }
    if name.len() > TOOL_NAME_MAX {
        return Err(format!(
            "a tool name of {} characters is too long: at most {TOOL_NAME_MAX}, which the call syntax can write",
            name.len()
        ));
    }
    if super::builtins::BUILT_IN_TOOLS.contains(&name) {
        return Err(format!(
            "{name:?} is the name of a built-in tool the harness offers itself; name the tool otherwise"
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// No side effects: may run concurrently with other reads.
    #[default]
    Read,
    Write,
}

/// What a tool returns to the loop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    /// Facts for the caller of the loop (a fixture gap, say); never shown to the model.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub meta: Value,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            ..Default::default()
        }
    }
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            ..Default::default()
        }
    }
    pub fn with_meta(mut self, meta: Value) -> Self {
        self.meta = meta;
        self
    }
}

pub type Executor = Arc<dyn Fn(&Map<String, Value>) -> ToolOutput + Send + Sync>;

/// A write that ran earlier in the same conversation: what a tool with state answers from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorWrite {
    pub tool: String,
    pub arguments: Map<String, Value>,
}

/// A tool whose answer depends on the writes before it in the conversation.
pub type StatefulExecutor =
    Arc<dyn Fn(&Map<String, Value>, &[PriorWrite]) -> ToolOutput + Send + Sync>;

#[derive(Clone)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
    pub effect: Effect,
    /// Offered only once this skill is loaded.
    pub skill_gate: Option<String>,
    /// Deferred: listed by name under this group until `tool_search` loads it (`harness::deferred`).
    pub deferred: Option<String>,
    pub executor: Executor,
    /// Set for a tool with state: called instead of `executor`, with the conversation's writes.
    pub stateful: Option<StatefulExecutor>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("effect", &self.effect)
            .field("skill_gate", &self.skill_gate)
            .field("deferred", &self.deferred)
            .finish()
    }
}

impl ToolDef {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        effect: Effect,
        executor: impl Fn(&Map<String, Value>) -> ToolOutput + Send + Sync + 'static,
    ) -> Self {
        ToolDef {
            name: name.into(),
            description: description.into(),
            parameters,
            effect,
            skill_gate: None,
            deferred: None,
            executor: Arc::new(executor),
            stateful: None,
        }
    }

    /// A tool with state, answered from the writes that ran before the call.
    pub fn with_state(
        mut self,
        executor: impl Fn(&Map<String, Value>, &[PriorWrite]) -> ToolOutput + Send + Sync + 'static,
    ) -> Self {
        self.stateful = Some(Arc::new(executor));
        self
    }

    /// Runs the tool on `arguments`, after the conversation's `writes`.
    pub fn call(&self, arguments: &Map<String, Value>, writes: &[PriorWrite]) -> ToolOutput {
        match &self.stateful {
            Some(stateful) => stateful(arguments, writes),
            None => (self.executor)(arguments),
        }
    }

    pub fn gated_by(mut self, skill: impl Into<String>) -> Self {
        self.skill_gate = Some(skill.into());
        self
    }

    /// Defers the tool under `group` (empty: no group of its own).
    pub fn deferred_in(mut self, group: impl Into<String>) -> Self {
        self.deferred = Some(group.into());
        self
    }
}

/// Tools by name, in a stable order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, ToolDef>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, tool: ToolDef) {
        self.tools.insert(tool.name.clone(), tool);
    }

    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.tools.get(name)
    }

    pub fn all(&self) -> impl Iterator<Item = &ToolDef> {
        self.tools.values()
    }

    /// Tools the model may call now: ungated ones and those whose skill is loaded.
    pub fn visible<'a>(
        &'a self,
        loaded_skills: &'a [String],
    ) -> impl Iterator<Item = &'a ToolDef> + 'a {
        self.tools.values().filter(move |t| match &t.skill_gate {
            None => true,
            Some(skill) => loaded_skills.iter().any(|s| s == skill),
        })
    }
}

/// A compact, one-line-per-parameter rendering of a tool: small models follow it better than
/// a raw JSON schema, and it costs fewer prompt tokens.
pub fn describe_tool(name: &str, description: &str, parameters: &Value) -> String {
    let mut out = format!("- {name}: {}", description.trim());
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = parameters["properties"].as_object() {
        for (key, schema) in props {
            let kind = schema["type"].as_str().unwrap_or("any");
            let need = if required.contains(&key.as_str()) {
                "required"
            } else {
                "optional"
            };
            out.push_str(&format!("\n    {key} ({kind}, {need})"));
            if let Some(d) = schema["description"].as_str() {
                out.push_str(&format!(": {}", d.trim()));
            }
        }
    }
    out
}
