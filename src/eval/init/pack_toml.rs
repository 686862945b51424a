//! The text of a new pack's `pack.toml`: its settings, a `[[tools]]` entry per tool (a JSON
//! schema written as inline TOML), and the starter laws.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::{
    fixtures_of, key_arguments_of, needs_category, world_of, ToolSource, NO_TOOL_CATEGORY,
};

/// The text of `pack.toml`: the settings, one `[[tools]]` entry per tool, then the laws.
pub(super) fn pack_toml(
    pack_name: &str,
    skill_name: &str,
    skills_dir: &Path,
    tools: &[(String, ToolSource)],
    writes: &[String],
) -> String {
    let mut toml = String::new();
    write_settings(&mut toml, pack_name, skill_name, skills_dir, tools, writes);
    let world = world_of(tools, writes);
    for (name, source) in tools {
        if !matches!(source, ToolSource::Script { .. }) {
            write_tool(&mut toml, name, source, writes.contains(name), world);
        }
    }
    write_laws(&mut toml, tools, writes);
    write_scripts(&mut toml, tools);
    toml
}

/// What to do next, the pack's name and skill, the categories (one per tool, and one for
/// prompts that need none), and settings a small model answers well under.
fn write_settings(
    toml: &mut String,
    pack_name: &str,
    skill_name: &str,
    skills_dir: &Path,
    tools: &[(String, ToolSource)],
    writes: &[String],
) {
    let mut categories: Vec<String> = tools.iter().map(|(name, _)| needs_category(name)).collect();
    categories.push(NO_TOOL_CATEGORY.to_string());
    let _ = writeln!(
        toml,
        "# Written by `skilleval init`. Replace the starter prompts in corpus.jsonl with real ones"
    );
    let _ = writeln!(
        toml,
        "# (a category needs enough samples to reach a verdict: `skilleval check` says how many),"
    );
    let _ = writeln!(toml, "# add laws for what the skill promises, and record the tools' answers with `skilleval run --record gaps`.");
    let _ = writeln!(toml, "name = {}", quote(pack_name));
    let _ = writeln!(
        toml,
        "description = {}",
        quote(&format!(
            "The {skill_name} skill on a small model: when to call its tools and how to answer."
        ))
    );
    let _ = writeln!(toml, "skill = {}", quote(skill_name));
    let _ = writeln!(
        toml,
        "skills_dir = {}",
        quote(&skills_dir.to_string_lossy())
    );
    let _ = writeln!(toml, "corpus = \"corpus.jsonl\"");
    let _ = writeln!(
        toml,
        "categories = [{}]",
        categories
            .iter()
            .map(|c| quote(c))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(toml, "preload = true");
    let _ = writeln!(toml, "call_format = \"markup\"");
    // Stated, so that an author whose host shows a skill's body as text sees the choice.
    let _ = writeln!(
        toml,
        "# How the skill's example blocks reach the model: \"turns\" (earlier turns, which a small\n# model copies) or \"text\" (the body as written, as a harness without example blocks shows it).\nskill_examples = \"turns\""
    );
    let _ = writeln!(
        toml,
        "instructions = \"You are a helpful assistant. Answer in one or two sentences.\""
    );
    let _ = writeln!(
        toml,
        "\n[sampling]\ntemperature = 0.7\ntop_k = 40\ntop_p = 0.95"
    );
    if writes.is_empty() {
        let _ = writeln!(toml, "\n[budgets]\nmax_rounds = 3\nmax_generated_tokens = 200\nmax_tokens_per_round = 80\ntool_output_chars = 1200");
    } else {
        // A write's conversation takes a question, the user's yes, the call and the answer:
        // the budgets count over all of it, so that confirming is never cut short.
        let _ = writeln!(toml, "\n# Budgets count over a whole conversation: ask, hear the user, call, answer.\n[budgets]\nmax_rounds = 6\nmax_generated_tokens = 480\nmax_tokens_per_round = 96\ntool_output_chars = 1200");
    }
}

/// One `[[tools]]` entry: the tool's kind, what its source says of it, and its recordings.
fn write_tool(
    toml: &mut String,
    name: &str,
    source: &ToolSource,
    write: bool,
    world: Option<&str>,
) {
    let _ = writeln!(toml, "\n[[tools]]\nname = {}", quote(name));
    if write {
        let _ = writeln!(
            toml,
            "# A write: it runs only once the scripted user has said yes to a confirmation."
        );
        let _ = writeln!(toml, "effect = \"write\"");
    }
    let fixtures = fixtures_of(name, source).unwrap_or_default();
    let recordings = |toml: &mut String, arguments: &[String]| {
        let keys = arguments
            .iter()
            .map(|a| quote(a))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            toml,
            "fixtures = {}\nkey_arguments = [{keys}]",
            quote(&fixtures)
        );
    };
    match source {
        ToolSource::Command {
            argv,
            description,
            arguments,
        } => {
            let _ = writeln!(toml, "kind = \"command\"");
            let _ = writeln!(toml, "description = {}", quote(description));
            let _ = writeln!(
                toml,
                "parameters = {}",
                inline_toml(&string_parameters(arguments))
            );
            let _ = writeln!(toml, "# Called with the call's arguments as JSON on stdin while recording, in a scratch\n# folder ($SKILLEVAL_SCRATCH; the pack's folder is $SKILLEVAL_PACK_DIR); its stdout is the answer.");
            let _ = writeln!(
                toml,
                "command = [{}]",
                argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(", ")
            );
            if let Some(world) = world {
                let _ = writeln!(toml, "# The state each conversation starts from, copied into the scratch folder.\nworld = {}", quote(world));
            }
            recordings(toml, arguments);
        }
        ToolSource::Recorded {
            description,
            arguments,
        } => {
            let _ = writeln!(toml, "kind = \"recorded\"");
            let _ = writeln!(toml, "description = {}", quote(description));
            let _ = writeln!(
                toml,
                "parameters = {}",
                inline_toml(&string_parameters(arguments))
            );
            recordings(toml, arguments);
        }
        ToolSource::Mcp { argv, listed } => {
            let _ = writeln!(toml, "kind = \"mcp\"");
            let _ = writeln!(
                toml,
                "# From the server's tools/list; the server is asked only while recording."
            );
            let _ = writeln!(toml, "description = {}", quote(&listed.description));
            let _ = writeln!(toml, "parameters = {}", inline_toml(&listed.input_schema));
            match crate::tools::mcp_http::url_in(argv) {
                Some(url) => {
                    let _ = writeln!(toml, "url = {}", quote(url));
                }
                None => {
                    let _ = writeln!(
                        toml,
                        "server = [{}]",
                        argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(", ")
                    );
                }
            }
            recordings(toml, &key_arguments_of(&listed.input_schema));
        }
        // Offered from the skill's folder (`write_scripts`), never as a `[[tools]]` entry.
        ToolSource::Script { .. } => {}
        ToolSource::Typed => {
            let _ = writeln!(toml, "kind = {}", quote(name));
            if crate::tools::computed(name).is_none() {
                let _ = writeln!(toml, "fixtures = {}\nkey_arguments = [\"location\"]\nfolds = [\"case\", \"whitespace\", \"punctuation\"]", quote(&fixtures));
            }
        }
    }
}

/// The skill's scripts need no `[[tools]]` entry: each is offered once the skill loads, a
/// Python script described by its `get_args()`. An executable that is not Python gets its
/// one line under `[script_executables]`, to fill in.
fn write_scripts(toml: &mut String, tools: &[(String, ToolSource)]) {
    let mut executables = Vec::new();
    for (name, source) in tools {
        if let ToolSource::Script {
            in_tree, python, ..
        } = source
        {
            match python {
                true => {
                    let _ = writeln!(toml, "\n# Tool {name}: the skill's script {in_tree}, described by its get_args(); recordings in fixtures/{name}.");
                }
                false => executables.push(format!(
                    "{} = {{ description = {}, parameters = {{ type = \"object\", properties = {{}} }} }}",
                    quote(in_tree),
                    quote(&format!("{name}: describe what it does and what it returns."))
                )),
            }
        }
    }
    if !executables.is_empty() {
        let _ = writeln!(toml, "\n# The skill's executables that are not Python: what the model reads of each, and its arguments\n# (JSON on its stdin).\n[script_executables]\n{}", executables.join("\n"));
    }
}

/// The starter laws: each tool called when its category needs it, none called when no tool is
/// needed, and an answer at the end. A write's samples are conversations: it is confirmed first
/// and never runs without the user's yes, and those two laws and the calls are the skill's
/// purpose (`purpose = true`, which the headline leads with). The stop law leaves them out: a
/// wording that skips the confirmation ends sooner, and must not score for it.
fn write_laws(toml: &mut String, tools: &[(String, ToolSource)], writes: &[String]) {
    for (name, _) in tools {
        let _ = writeln!(
            toml,
            "\n[[laws]]\nname = {}\nkind = \"tool_called\"\ntool = {}\ncategories = [{}]\npurpose = true",
            quote(&format!("calls-{name}")),
            quote(name),
            quote(&needs_category(name))
        );
    }
    for name in writes {
        let _ = writeln!(
            toml,
            "\n# The safeguard: an approval question, answered, before the write.\n[[laws]]\nname = {}\nkind = \"confirms_before_call\"\ntool = {}\ncategories = [{}]\npurpose = true",
            quote(&format!("confirms-before-{name}")),
            quote(name),
            quote(&needs_category(name))
        );
    }
    if !writes.is_empty() {
        let categories: Vec<String> = writes.iter().map(|w| quote(&needs_category(w))).collect();
        let _ = writeln!(
            toml,
            "\n[[laws]]\nname = \"no-write-without-approval\"\nkind = \"no_unapproved_write\"\ncategories = [{}]\npurpose = true",
            categories.join(", ")
        );
    }
    let _ = writeln!(
        toml,
        "\n[[laws]]\nname = \"no-call-when-not-needed\"\nkind = \"tool_not_called\"\ncategories = [{}]",
        quote(NO_TOOL_CATEGORY)
    );
    let except = match writes.is_empty() {
        true => String::new(),
        false => format!(
            "\n# Not in a write's conversation, where a wording that skips the confirmation ends sooner.\nexcept_categories = [{}]",
            writes
                .iter()
                .map(|w| quote(&needs_category(w)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let _ = writeln!(
        toml,
        "\n[[laws]]\nname = \"answers\"\nkind = \"stop_reason_is\"\nreason = \"answered\"{except}"
    );
}

/// An object schema of string arguments, all required.
fn string_parameters(arguments: &[String]) -> Value {
    let properties: Map<String, Value> = arguments
        .iter()
        .map(|a| (a.clone(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": properties, "required": arguments})
}

/// A TOML basic string: JSON's string escapes are TOML's too.
fn quote(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// A JSON value as an inline TOML value; TOML has no null, so null members are left out.
fn inline_toml(value: &Value) -> String {
    match value {
        Value::Null => "\"\"".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quote(s),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .filter(|v| !v.is_null())
                .map(inline_toml)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(members) => {
            let inner: Vec<String> = members
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{} = {}", quote(k), inline_toml(v)))
                .collect();
            if inner.is_empty() {
                "{}".to_string()
            } else {
                format!("{{ {} }}", inner.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_schemas_become_toml_that_reads_back_as_the_same_json() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string", "description": "a \"quoted\" path\nwith a line"}, "n": {"type": "integer", "minimum": 1, "default": null}}, "required": ["path"], "additionalProperties": false});
        let text = format!("parameters = {}", inline_toml(&schema));
        let back: toml::Value = toml::from_str(&text).unwrap();
        let back: Value = serde_json::to_value(&back["parameters"]).unwrap();
        let mut expected = schema.clone();
        expected["properties"]["n"]
            .as_object_mut()
            .unwrap()
            .remove("default");
        assert_eq!(back, expected);
    }

    #[test]
    fn a_new_pack_states_how_its_examples_are_shown() {
        let text = pack_toml("trains", "train-times", Path::new("skills"), &[], &[]);
        let value: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(value["skill_examples"].as_str(), Some("turns"), "{text}");
        assert!(text.contains("\"text\" (the body as written"), "{text}");
    }
}
