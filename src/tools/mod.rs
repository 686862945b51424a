//! Typed tools a pack can offer the model: `weather_lookup`, answered from its live service or
//! its recordings, and the computed tools `calculate` and `convert_units`, which work out every
//! answer themselves and so need no recordings. Also the clients of a pack's own live tools,
//! asked only while recording: a program (`command.rs`) and an MCP server (`mcp.rs`, over stdio or
//! streamable HTTP, `mcp_http.rs`), and the
//! scratch folder a program with state is asked in (`scratch.rs`); a skill's Python script read
//! as a tool from its argparse parser (`script.rs`).

pub mod calculator;
pub mod command;
mod exact;
pub mod mcp;
pub mod mcp_http;
pub mod scratch;
pub mod script;
pub mod units;
pub mod weather;

use serde_json::{Map, Value};

use crate::harness::tools::ToolOutput;

/// The typed tools skilleval carries, by `kind` in `pack.toml`.
pub const TYPED_TOOLS: [&str; 3] = [weather::TOOL_NAME, calculator::TOOL_NAME, units::TOOL_NAME];

pub fn is_typed_tool(kind: &str) -> bool {
    TYPED_TOOLS.contains(&kind)
}

/// A computed tool: its description, argument schema and answer.
pub struct Computed {
    pub description: &'static str,
    pub parameters: Value,
    pub answer: fn(&Map<String, Value>) -> ToolOutput,
}

/// The computed tool of this `kind`, if it is one.
pub fn computed(kind: &str) -> Option<Computed> {
    match kind {
        calculator::TOOL_NAME => Some(Computed {
            description: calculator::DESCRIPTION,
            parameters: calculator::parameters_schema(),
            answer: calculator::answer,
        }),
        units::TOOL_NAME => Some(Computed {
            description: units::DESCRIPTION,
            parameters: units::parameters_schema(),
            answer: units::answer,
        }),
        _ => None,
    }
}
