//! The system text the model sees: instructions, call syntax, skill index, loaded skills, tools.

use serde_json::Value;

use super::skills::SkillTree;
use super::toolcall::{render, CallFormat};
use super::tools::ToolDef;

pub const LOAD_SKILL: &str = "load_skill";
pub const LOAD_SKILL_REFERENCE: &str = "load_skill_reference";

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

pub fn load_skill_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "the skill's name from the list above"}},
        "required": ["name"]
    })
}

pub fn load_reference_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "a loaded skill"},
            "name": {"type": "string", "description": "one of the skill's references"}
        },
        "required": ["skill", "name"]
    })
}

pub struct SystemPrompt<'a> {
    pub instructions: &'a str,
    pub format: CallFormat,
    pub skills: &'a SkillTree,
    pub loaded: &'a [String],
    pub tools: &'a [&'a ToolDef],
}

impl SystemPrompt<'_> {
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.instructions.trim().is_empty() {
            parts.push(self.instructions.trim().to_string());
        }
        let has_skills = self.skills.iter().next().is_some();
        if !self.tools.is_empty() || has_skills {
            parts.push(format!(
                "# Calling tools\n{}",
                render::format_instructions(self.format).trim()
            ));
        }
        if has_skills {
            let mut index = String::from("# Skills\n");
            for skill in self.skills.iter() {
                let state = if self.loaded.iter().any(|l| l == skill.name()) {
                    " (loaded)"
                } else {
                    ""
                };
                index.push_str(&format!(
                    "- {}{state}: {}\n",
                    skill.name(),
                    skill.meta.description.trim()
                ));
            }
            parts.push(index.trim_end().to_string());
        }
        for name in self.loaded {
            if let Some(skill) = self.skills.get(name) {
                let mut text = format!("# Skill: {}\n{}", skill.name(), skill.body.trim());
                let refs = skill.reference_names();
                if !refs.is_empty() {
                    text.push_str(&format!(
                        "\n\nReferences ({LOAD_SKILL_REFERENCE} with skill=\"{}\" and name=...): {}",
                        skill.name(),
                        refs.join(", ")
                    ));
                }
                parts.push(text);
            }
        }
        let mut tools: Vec<String> = self
            .tools
            .iter()
            .map(|t| describe_tool(&t.name, &t.description, &t.parameters))
            .collect();
        if has_skills
            && self
                .skills
                .iter()
                .any(|s| !self.loaded.iter().any(|l| l == s.name()))
        {
            tools.push(describe_tool(
                LOAD_SKILL,
                "Load a skill's instructions and tools.",
                &load_skill_schema(),
            ));
        }
        if self.loaded.iter().any(|l| {
            self.skills
                .get(l)
                .is_some_and(|s| !s.reference_names().is_empty())
        }) {
            tools.push(describe_tool(
                LOAD_SKILL_REFERENCE,
                "Load one reference document of a loaded skill.",
                &load_reference_schema(),
            ));
        }
        if !tools.is_empty() {
            parts.push(format!("# Tools\n{}", tools.join("\n")));
        }
        parts.join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::harness::tools::{Effect, ToolOutput};

    fn test_skills() -> SkillTree {
        SkillTree::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/skills"))
            .expect("the test skills tree loads")
    }

    fn tool(name: &str) -> ToolDef {
        ToolDef::new(
            name,
            "Does a thing.",
            json!({"type": "object", "properties": {}}),
            Effect::Read,
            |_| ToolOutput::ok(""),
        )
    }

    fn render(skills: &SkillTree, loaded: &[&str], tools: &[&ToolDef]) -> String {
        let loaded: Vec<String> = loaded.iter().map(|s| s.to_string()).collect();
        SystemPrompt {
            instructions: "  Be brief.  \n",
            format: CallFormat::Markup,
            skills,
            loaded: &loaded,
            tools,
        }
        .render()
    }

    #[test]
    fn a_tool_is_one_line_then_one_line_per_parameter() {
        let parameters = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": " a city name "},
                "days": {"type": "integer"},
                "units": {}
            },
            "required": ["city"]
        });
        assert_eq!(
            describe_tool("forecast", " Weather ahead. ", &parameters),
            "- forecast: Weather ahead.\n    city (string, required): a city name\n    days (integer, optional)\n    units (any, optional)"
        );
        assert_eq!(describe_tool("ping", "Ping.", &json!({})), "- ping: Ping.");
    }

    #[test]
    fn without_tools_or_skills_only_the_instructions_remain() {
        assert_eq!(render(&SkillTree::default(), &[], &[]), "Be brief.");
    }

    #[test]
    fn tools_without_skills_get_the_call_syntax_but_no_skill_sections() {
        let ping = tool("ping");
        let text = render(&SkillTree::default(), &[], &[&ping]);
        assert!(text.contains("# Calling tools\n"));
        assert!(text.ends_with("# Tools\n- ping: Does a thing."));
        assert!(!text.contains("# Skills"));
        assert!(!text.contains(LOAD_SKILL));
    }

    #[test]
    fn sections_come_in_a_fixed_order() {
        let ping = tool("ping");
        let text = render(&test_skills(), &["clock"], &[&ping]);
        let order = [
            "Be brief.",
            "# Calling tools",
            "# Skills",
            "# Skill: clock",
            "# Tools",
        ];
        let positions: Vec<usize> = order
            .iter()
            .map(|heading| text.find(heading).expect(heading))
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    }

    #[test]
    fn load_skill_is_offered_while_a_skill_is_unloaded() {
        let skills = test_skills();
        let offered = format!("- {LOAD_SKILL}:");
        assert!(render(&skills, &[], &[]).contains(&offered));
        assert!(render(&skills, &["clock"], &[]).contains(&offered));
        let all_loaded = render(&skills, &["clock", "notes"], &[]);
        assert!(!all_loaded.contains(&offered));
        assert!(all_loaded.contains("- clock (loaded): "));
        assert!(all_loaded.contains("- notes (loaded): "));
    }

    #[test]
    fn load_skill_reference_is_offered_only_for_a_loaded_skill_with_references() {
        let skills = test_skills();
        let offered = format!("- {LOAD_SKILL_REFERENCE}:");
        assert!(!render(&skills, &[], &[]).contains(&offered));
        assert!(!render(&skills, &["notes"], &[]).contains(&offered));
        let text = render(&skills, &["clock"], &[]);
        assert!(text.contains(&offered));
        assert!(text.contains(&format!(
            "References ({LOAD_SKILL_REFERENCE} with skill=\"clock\" and name=...): zones"
        )));
    }
}
