//! Deferred tools: the model sees a deferred tool's name, under its group, until it calls
//! `tool_search`; the tool's description then arrives as that call's result, in the history,
//! so the system text (and the cached prompt before it) does not change.

use serde_json::{Map, Value};

use super::builtins::TOOL_SEARCH;
use super::tools::{describe_tool, ToolDef, ToolOutput};

/// The group a deferred tool without one is listed under.
const NO_GROUP: &str = "other";

fn group_of(tool: &ToolDef) -> &str {
    tool.deferred
        .as_deref()
        .filter(|g| !g.trim().is_empty())
        .unwrap_or(NO_GROUP)
}

/// The system text's section naming the deferred tools, by group in first-seen order.
pub fn index_section(deferred: &[&ToolDef]) -> Option<String> {
    if deferred.is_empty() {
        return None;
    }
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for tool in deferred {
        let group = group_of(tool);
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, names)) => names.push(&tool.name),
            None => groups.push((group, vec![&tool.name])),
        }
    }
    let mut text = format!(
        "# More tools\nThese tools are not described yet. Call {TOOL_SEARCH} with a tool's name or its group to load its description, then call the tool."
    );
    for (group, names) in groups {
        text.push_str(&format!("\n- {group}: {}", names.join(", ")));
    }
    Some(text)
}

/// `tool_search`: the deferred tools a query names (a tool's name or its group, any case, or
/// else the tools whose name or description holds it), described; and their names, now loaded.
pub fn search(deferred: &[&ToolDef], args: &Map<String, Value>) -> (ToolOutput, Vec<String>) {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_lowercase();
    let exact: Vec<&ToolDef> = deferred
        .iter()
        .copied()
        .filter(|t| t.name.to_lowercase() == query || group_of(t).to_lowercase() == query)
        .collect();
    let found = if exact.is_empty() && !query.is_empty() {
        deferred
            .iter()
            .copied()
            .filter(|t| {
                t.name.to_lowercase().contains(&query)
                    || t.description.to_lowercase().contains(&query)
            })
            .collect()
    } else {
        exact
    };
    if found.is_empty() {
        let names: Vec<&str> = deferred.iter().map(|t| t.name.as_str()).collect();
        return (
            ToolOutput::error(format!(
                "No tool matches {query:?}. Tools to search: {}.",
                names.join(", ")
            )),
            Vec::new(),
        );
    }
    let described: Vec<String> = found
        .iter()
        .map(|t| describe_tool(&t.name, &t.description, &t.parameters))
        .collect();
    let output = ToolOutput::ok(format!("Loaded:\n{}", described.join("\n")));
    (output, found.iter().map(|t| t.name.clone()).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::harness::tools::Effect;

    fn tool(name: &str, group: Option<&str>) -> ToolDef {
        ToolDef::new(
            name,
            format!("The {name} tool."),
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
            Effect::Read,
            |_| ToolOutput::ok(""),
        )
        .deferred_in(group.unwrap_or(""))
    }

    fn query(q: &str) -> Map<String, Value> {
        json!({"query": q}).as_object().unwrap().clone()
    }

    #[test]
    fn the_index_lists_names_by_group() {
        let (a, b, c) = (
            tool("build_log", Some("ci")),
            tool("deploy", None),
            tool("test_report", Some("ci")),
        );
        assert_eq!(
            index_section(&[&a, &b, &c]).unwrap(),
            "# More tools\nThese tools are not described yet. Call tool_search with a tool's name or its group to load its description, then call the tool.\n- ci: build_log, test_report\n- other: deploy"
        );
        assert_eq!(index_section(&[]), None);
    }

    #[test]
    fn a_search_by_name_or_group_loads_and_describes() {
        let (a, b) = (
            tool("build_log", Some("ci")),
            tool("test_report", Some("ci")),
        );
        let (out, loaded) = search(&[&a, &b], &query("Build_Log"));
        assert_eq!(loaded, vec!["build_log"]);
        assert_eq!(
            out.content,
            "Loaded:\n- build_log: The build_log tool.\n    id (string, required)"
        );
        let (_, loaded) = search(&[&a, &b], &query("ci"));
        assert_eq!(loaded, vec!["build_log", "test_report"]);
        let (_, loaded) = search(&[&a, &b], &query("report"));
        assert_eq!(loaded, vec!["test_report"]);
        let (out, loaded) = search(&[&a, &b], &query("weather"));
        assert!(out.is_error && loaded.is_empty());
        assert!(
            out.content.contains("build_log, test_report"),
            "{}",
            out.content
        );
    }
}
