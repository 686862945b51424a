//! The system text the model sees: instructions, call syntax, skill index, loaded skills, tools.

use serde_json::{Map, Value};

use super::builtins::{
    self, LOAD_SKILL, LOAD_SKILL_DESCRIPTION, LOAD_SKILL_REFERENCE,
    LOAD_SKILL_REFERENCE_DESCRIPTION, READ_TOOL_OUTPUT, READ_TOOL_OUTPUT_DESCRIPTION, TOOL_SEARCH,
    TOOL_SEARCH_DESCRIPTION,
};
use super::deferred;
use super::examples::{self, Exchange, Presentation};
use super::skills::SkillTree;
use super::template::Message;
use super::toolcall::render::{self, ShownCall};
use super::toolcall::CallFormat;
use super::tools::{describe_tool, ToolDef};

pub struct SystemPrompt<'a> {
    pub instructions: &'a str,
    pub format: CallFormat,
    pub skills: &'a SkillTree,
    pub loaded: &'a [String],
    pub tools: &'a [&'a ToolDef],
    pub examples: Presentation,
    /// Deferred tools, listed by name under their groups, with `tool_search` offered.
    pub deferred: &'a [&'a ToolDef],
    /// Offer `read_tool_output`, for results spilled to a file.
    pub read_tool_output: bool,
}

/// A value for a parameter from its schema (`examples`, `default`, `enum`, `const`), if any.
fn schema_value(schema: &Value) -> Option<Value> {
    schema["examples"]
        .get(0)
        .or_else(|| schema.get("default"))
        .or_else(|| schema["enum"].get(0))
        .or_else(|| schema.get("const"))
        .filter(|v| !v.is_null())
        .cloned()
}

/// One tool as the model is offered it.
struct Offered {
    name: String,
    description: String,
    parameters: Value,
    /// Real values for the call syntax's example, when known.
    arguments: Option<Map<String, Value>>,
}

impl Offered {
    fn parameter_names(&self) -> Vec<String> {
        self.parameters["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Values for every required parameter from the schema, else none.
    fn schema_arguments(parameters: &Value) -> Option<Map<String, Value>> {
        let required = parameters["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut arguments = Map::new();
        for key in required.iter().filter_map(Value::as_str) {
            arguments.insert(
                key.to_string(),
                schema_value(&parameters["properties"][key])?,
            );
        }
        Some(arguments)
    }
}

impl SystemPrompt<'_> {
    fn loaded_skills(&self) -> impl Iterator<Item = &super::skills::Skill> {
        self.loaded.iter().filter_map(|name| self.skills.get(name))
    }

    /// The tools offered now, with the built-ins, in the order the prompt lists them.
    fn offered(&self) -> Vec<Offered> {
        // Shown as text, examples are the skill's words only: the harness takes nothing from them.
        let examples: Vec<Exchange> = match self.examples {
            Presentation::Turns => self.loaded_skills().flat_map(|s| s.examples()).collect(),
            Presentation::Text => Vec::new(),
        };
        let mut offered: Vec<Offered> = self
            .tools
            .iter()
            .map(|t| Offered {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
                arguments: examples::first_call_to(&examples, &t.name)
                    .map(|call| call.arguments.clone())
                    .or_else(|| Offered::schema_arguments(&t.parameters)),
            })
            .collect();
        let unloaded = self
            .skills
            .iter()
            .find(|s| !self.loaded.iter().any(|l| l == s.name()));
        if let Some(skill) = unloaded {
            let mut arguments = Map::new();
            arguments.insert("name".into(), Value::from(skill.name()));
            offered.push(Offered {
                name: LOAD_SKILL.into(),
                description: LOAD_SKILL_DESCRIPTION.into(),
                parameters: builtins::load_skill_schema(),
                arguments: Some(arguments),
            });
        }
        if let Some(first) = self.deferred.first() {
            let mut arguments = Map::new();
            arguments.insert("query".into(), Value::from(first.name.clone()));
            offered.push(Offered {
                name: TOOL_SEARCH.into(),
                description: TOOL_SEARCH_DESCRIPTION.into(),
                parameters: builtins::tool_search_schema(),
                arguments: Some(arguments),
            });
        }
        if self.read_tool_output {
            offered.push(Offered {
                name: READ_TOOL_OUTPUT.into(),
                description: READ_TOOL_OUTPUT_DESCRIPTION.into(),
                parameters: builtins::read_tool_output_schema(),
                arguments: None,
            });
        }
        let with_references = self
            .loaded_skills()
            .find_map(|s| Some((s.name().to_string(), s.reference_names().first()?.clone())));
        if let Some((skill, reference)) = with_references {
            let mut arguments = Map::new();
            arguments.insert("skill".into(), Value::from(skill));
            arguments.insert("name".into(), Value::from(reference));
            offered.push(Offered {
                name: LOAD_SKILL_REFERENCE.into(),
                description: LOAD_SKILL_REFERENCE_DESCRIPTION.into(),
                parameters: builtins::load_reference_schema(),
                arguments: Some(arguments),
            });
        }
        offered
    }

    pub fn render(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.instructions.trim().is_empty() {
            parts.push(self.instructions.trim().to_string());
        }
        let has_skills = self.skills.iter().next().is_some();
        let offered = self.offered();
        // The syntax is shown with the first tool that has real values for some arguments,
        // else one that needs none, else spelled out.
        if let Some(first) = offered.first() {
            let shown = offered
                .iter()
                .find(|o| o.arguments.as_ref().is_some_and(|a| !a.is_empty()))
                .or_else(|| offered.iter().find(|o| o.arguments.is_some()))
                .unwrap_or(first);
            let call = ShownCall {
                tool: &shown.name,
                parameters: shown.parameter_names(),
                arguments: shown.arguments.clone(),
            };
            parts.push(format!(
                "# Calling tools\n{}",
                render::format_instructions(self.format, &call).trim()
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
                let description = skill.meta.description.trim();
                if description.is_empty() {
                    index.push_str(&format!("- {}{state}\n", skill.name()));
                } else {
                    index.push_str(&format!("- {}{state}: {description}\n", skill.name()));
                }
            }
            parts.push(index.trim_end().to_string());
        }
        for skill in self.loaded_skills() {
            let mut text = format!("# Skill: {}\n{}", skill.name(), skill.text(self.examples));
            let refs = skill.reference_names();
            if !refs.is_empty() {
                text.push_str(&format!(
                    "\n\nReferences: call {LOAD_SKILL_REFERENCE} with skill=\"{}\" and one of these names: {}",
                    skill.name(),
                    refs.join(", ")
                ));
            }
            parts.push(text.trim_end().to_string());
        }
        let tools: Vec<String> = offered
            .iter()
            .map(|t| describe_tool(&t.name, &t.description, &t.parameters))
            .collect();
        if !tools.is_empty() {
            parts.push(format!("# Tools\n{}", tools.join("\n")));
        }
        if let Some(index) = deferred::index_section(self.deferred) {
            parts.push(index);
        }
        parts.join("\n\n")
    }

    /// The loaded skills' worked examples as earlier turns, calls in this prompt's syntax.
    pub fn example_turns(&self) -> Vec<Message> {
        if self.examples == Presentation::Text {
            return Vec::new();
        }
        self.loaded_skills()
            .flat_map(|s| s.examples())
            .flat_map(|e| examples::to_messages(&e, self.format))
            .collect()
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
            examples: Default::default(),
            deferred: &[],
            read_tool_output: false,
        }
        .render()
    }

    const WITH_EXAMPLE: &str = "---\nname: clock\ndescription: Tells the time.\n---\nCall ping for the time.\n\n```example\nUser: time in Oslo?\nAssistant: <tool_call>{\"name\": \"ping\", \"arguments\": {\"zone\": \"Oslo\"}}</tool_call>\nTool: 12:00\nAssistant: It is noon.\n```\n";

    fn with_examples(presentation: Presentation) -> (String, Vec<Message>) {
        let skills = test_skills()
            .with_overlay("clock", WITH_EXAMPLE, Path::new("clock.md"))
            .unwrap();
        let ping = ToolDef::new(
            "ping",
            "Does a thing.",
            json!({"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}),
            Effect::Read,
            |_| ToolOutput::ok(""),
        );
        let loaded = vec!["clock".to_string()];
        let tools = [&ping];
        let prompt = SystemPrompt {
            instructions: "Be brief.",
            format: CallFormat::Markup,
            skills: &skills,
            loaded: &loaded,
            tools: &tools,
            examples: presentation,
            deferred: &[],
            read_tool_output: false,
        };
        (prompt.render(), prompt.example_turns())
    }

    #[test]
    fn examples_as_turns_leave_the_text_and_teach_the_call_syntax() {
        let (text, turns) = with_examples(Presentation::Turns);
        assert!(!text.contains("```example"), "{text}");
        assert!(text.contains("Call ping for the time."));
        assert!(
            text.contains("Oslo"),
            "the syntax line shows the example's value: {text}"
        );
        assert_eq!(turns.len(), 4, "{turns:?}");
    }

    #[test]
    fn examples_as_text_are_the_body_as_written_and_no_turns() {
        let (text, turns) = with_examples(Presentation::Text);
        assert!(
            text.contains("Call ping for the time.\n\n```example\nUser: time in Oslo?"),
            "{text}"
        );
        assert!(turns.is_empty(), "{turns:?}");
        let syntax = &text[text.find("# Calling tools").unwrap()..text.find("# Skills").unwrap()];
        assert!(!syntax.contains("Oslo"), "{syntax}");
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
    fn a_skill_without_a_description_is_listed_by_name_alone() {
        let skills = test_skills().with_description("clock", "").unwrap();
        let text = render(&skills, &[], &[]);
        assert!(text.contains("# Skills\n- clock\n- notes: "), "{text}");
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
            "References: call {LOAD_SKILL_REFERENCE} with skill=\"clock\" and one of these names: zones"
        )));
    }
}
