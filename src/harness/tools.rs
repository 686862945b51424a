//! Tool definitions and the registry the loop offers to the model.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// No side effects: may run concurrently with other reads.
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

#[derive(Clone)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
    pub effect: Effect,
    /// Offered only once this skill is loaded.
    pub skill_gate: Option<String>,
    pub executor: Executor,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("effect", &self.effect)
            .field("skill_gate", &self.skill_gate)
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
            executor: Arc::new(executor),
        }
    }

    pub fn gated_by(mut self, skill: impl Into<String>) -> Self {
        self.skill_gate = Some(skill.into());
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
