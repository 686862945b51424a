//! Typed tools a pack can offer the model.

pub mod weather;

/// The typed tools skilleval carries, by `kind` in `pack.toml`.
pub const TYPED_TOOLS: [&str; 1] = [weather::TOOL_NAME];

pub fn is_typed_tool(kind: &str) -> bool {
    TYPED_TOOLS.contains(&kind)
}
