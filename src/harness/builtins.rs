//! The tools the harness offers itself, beside a pack's: their names, which no pack tool may
//! take, their schemas and the words they are offered with.

use serde_json::{json, Value};

pub const LOAD_SKILL: &str = "load_skill";
pub const LOAD_SKILL_REFERENCE: &str = "load_skill_reference";
/// Loads deferred tools' descriptions (`harness::deferred`).
pub const TOOL_SEARCH: &str = "tool_search";
/// Reads on in a spilled tool result (`harness::spill`).
pub const READ_TOOL_OUTPUT: &str = "read_tool_output";

/// Every built-in tool's name.
pub const BUILT_IN_TOOLS: [&str; 4] = [
    LOAD_SKILL,
    LOAD_SKILL_REFERENCE,
    TOOL_SEARCH,
    READ_TOOL_OUTPUT,
];

pub const LOAD_SKILL_DESCRIPTION: &str = "Load a skill's instructions and tools.";
pub const LOAD_SKILL_REFERENCE_DESCRIPTION: &str = "Load one reference document of a loaded skill.";
pub const TOOL_SEARCH_DESCRIPTION: &str =
    "Load the description of tools listed under More tools, by a tool's name or a group's, before calling them.";
pub const READ_TOOL_OUTPUT_DESCRIPTION: &str =
    "Read more of a long tool result that was cut, from the file it names.";

/// The schema of the built-in tool `name`; `None` for a name no built-in has.
pub fn schema_of(name: &str) -> Option<Value> {
    match name {
        LOAD_SKILL => Some(load_skill_schema()),
        LOAD_SKILL_REFERENCE => Some(load_reference_schema()),
        TOOL_SEARCH => Some(tool_search_schema()),
        READ_TOOL_OUTPUT => Some(read_tool_output_schema()),
        _ => None,
    }
}

pub fn load_skill_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "the skill's name from the list above"}},
        "required": ["name"]
    })
}

pub fn load_reference_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "a loaded skill"},
            "name": {"type": "string", "description": "one of the skill's references"}
        },
        "required": ["skill", "name"]
    })
}

pub fn tool_search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "a tool's name or a group's, from More tools"}
        },
        "required": ["query"]
    })
}

pub fn read_tool_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "file": {"type": "string", "description": "the file a cut tool result names"},
            "offset": {"type": "integer", "description": "the character to read from; 0 is the start"}
        },
        "required": ["file"]
    })
}
