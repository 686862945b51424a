//! A new pack's starter corpus and judge cases: the prompts given (or placeholders to replace),
//! and for each a reply every law passes and, for every law, a reply where it fails.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::{key_arguments_of, needs_category, ToolSource, NO_TOOL_CATEGORY};

/// One prompt of the starter corpus.
pub(super) struct StarterSample {
    id: String,
    category: String,
    prompt: String,
    /// The sample's request needs a write: a conversation whose user confirms.
    write: bool,
}

/// The scripted user of a write's sample: it says yes to a confirmation and nothing else, and
/// only that yes lets the write run (decision 025).
fn confirming_user() -> Value {
    json!({
        "replies": [{"on": "approval", "say": "Yes, go ahead."}],
        "default": "That is all I can tell you.",
        "turns": 2,
        "approve": "when_confirmed"
    })
}

/// The starter prompts, by tool and then `none`: the ones given, else three placeholders a
/// category; and how many placeholders there are.
pub(super) fn starter_samples(
    prompts: &[(String, String)],
    tools: &[(String, ToolSource)],
    writes: &[String],
) -> (Vec<StarterSample>, usize) {
    let mut samples = Vec::new();
    let mut placeholders = 0;
    let keys = tools.iter().map(|(name, _)| name.as_str()).chain(["none"]);
    for key in keys {
        let category = if key == "none" {
            NO_TOOL_CATEGORY.to_string()
        } else {
            needs_category(key)
        };
        let given: Vec<&String> = prompts
            .iter()
            .filter(|(c, _)| c == key)
            .map(|(_, p)| p)
            .collect();
        let texts: Vec<String> = if given.is_empty() {
            placeholders += 3;
            (1..=3)
                .map(|n| match key {
                    "none" => {
                        format!("Replace me: a request that needs none of the skill's tools ({n}).")
                    }
                    tool => format!("Replace me: a request that needs {tool} ({n})."),
                })
                .collect()
        } else {
            given.into_iter().cloned().collect()
        };
        for (n, prompt) in texts.into_iter().enumerate() {
            samples.push(StarterSample {
                id: format!("{}-{:03}", category.replace('_', "-"), n + 1),
                category: category.clone(),
                prompt,
                write: writes.iter().any(|w| w == key),
            });
        }
    }
    (samples, placeholders)
}

/// `corpus.jsonl`: one line per starter prompt.
pub(super) fn corpus_jsonl(samples: &[StarterSample]) -> String {
    let mut corpus = String::new();
    for s in samples {
        let mut line = json!({"id": s.id, "category": s.category, "prompt": s.prompt});
        if s.write {
            line["user"] = confirming_user();
        }
        let _ = writeln!(corpus, "{line}");
    }
    corpus
}

/// The judge cases being written, one JSON line each, numbered from 1.
#[derive(Default)]
struct JudgeCases {
    text: String,
    count: usize,
}

impl JudgeCases {
    fn add(
        &mut self,
        prompt_id: &str,
        calls: Value,
        reply: &str,
        stop: Option<&str>,
        verdicts: Value,
        note: &str,
    ) {
        self.add_turns(prompt_id, None, calls, reply, stop, verdicts, note);
    }

    /// A case whose exchange has earlier `turns`, each answered by the sample's scripted user.
    #[allow(clippy::too_many_arguments)]
    fn add_turns(
        &mut self,
        prompt_id: &str,
        turns: Option<Value>,
        calls: Value,
        reply: &str,
        stop: Option<&str>,
        verdicts: Value,
        note: &str,
    ) {
        self.count += 1;
        let mut line = json!({"id": format!("case-{:03}", self.count), "prompt_id": prompt_id, "calls": calls, "reply": reply, "verdicts": verdicts, "source": "init", "note": note});
        if let Some(turns) = turns {
            line["turns"] = turns;
        }
        if let Some(stop) = stop {
            line["stop"] = json!(stop);
        }
        let _ = writeln!(self.text, "{line}");
    }
}

/// The judge cases: a passing reply for every sample, and for every law a reply where it fails.
pub(super) fn judge_cases(
    samples: &[StarterSample],
    tools: &[(String, ToolSource)],
    writes: &[String],
) -> String {
    let mut cases = JudgeCases::default();
    let mut failed_answers = false;
    for sample in samples {
        if sample.category == NO_TOOL_CATEGORY {
            no_tool_cases(&mut cases, &sample.id, tools.first());
            continue;
        }
        let tool = tools
            .iter()
            .find(|(n, _)| needs_category(n) == sample.category)
            .expect("a tool's category");
        if writes.contains(&tool.0) {
            write_cases(&mut cases, &sample.id, tool);
        } else {
            tool_cases(&mut cases, &sample.id, tool, !failed_answers);
            failed_answers = true;
        }
    }
    // Every tool a write: `answers` applies only where no tool is needed, and fails there.
    if let Some(sample) = samples.iter().find(|s| s.category == NO_TOOL_CATEGORY) {
        if !failed_answers {
            cases.add(
                &sample.id,
                json!([]),
                "",
                Some("round_budget"),
                json!({"no-call-when-not-needed": true, "answers": false}),
                "fails `answers`: the rounds ran out before an answer",
            );
        }
    }
    cases.text
}

/// A request that needs the write `tool`: asking first, hearing yes, then writing passes;
/// writing straight away is refused (it confirmed nothing and wrote without approval); doing
/// nothing fails the call, and confirms nothing either.
fn write_cases(cases: &mut JudgeCases, id: &str, (tool, source): &(String, ToolSource)) {
    let [calls, confirms, approved] = [
        format!("calls-{tool}"),
        format!("confirms-before-{tool}"),
        "no-write-without-approval".to_string(),
    ];
    let question = format!("Shall I go ahead with {tool}?");
    cases.add_turns(
        id,
        Some(json!([{"reply": question}])),
        json!([call_of(tool, source)]),
        "Done.",
        None,
        json!({calls.clone(): true, confirms.clone(): true, approved.clone(): true}),
        "passes: asked, heard yes, then wrote",
    );
    cases.add(
        id,
        json!([call_of(tool, source)]),
        "Done.",
        None,
        json!({calls.clone(): true, confirms.clone(): false, approved.clone(): false}),
        "fails: wrote without asking, so the write was refused",
    );
    cases.add(
        id,
        json!([]),
        "I cannot do that.",
        None,
        json!({calls: false, confirms: false, approved: true}),
        "fails: neither asked nor wrote",
    );
}

/// A prompt that needs no tool: answered without one passes, and with `tool` (the first, if
/// the skill has one) called fails.
fn no_tool_cases(cases: &mut JudgeCases, id: &str, tool: Option<&(String, ToolSource)>) {
    cases.add(
        id,
        json!([]),
        "Here is a plain answer.",
        None,
        json!({"no-call-when-not-needed": true, "answers": true}),
        "passes: answered without a tool",
    );
    if let Some((tool, source)) = tool {
        cases.add(
            id,
            json!([call_of(tool, source)]),
            "Here is what the tool said.",
            None,
            json!({"no-call-when-not-needed": false, "answers": true}),
            "fails: a tool called that the request does not need",
        );
    }
}

/// A prompt that needs `tool`: calling it then answering passes, answering without it fails,
/// and (`with_no_answer`, once in the pack) running out of rounds before an answer fails
/// `answers`.
fn tool_cases(
    cases: &mut JudgeCases,
    id: &str,
    (tool, source): &(String, ToolSource),
    with_no_answer: bool,
) {
    let law = format!("calls-{tool}");
    cases.add(
        id,
        json!([call_of(tool, source)]),
        "Here is what the tool said.",
        None,
        json!({law.clone(): true, "answers": true}),
        "passes: the tool called, then an answer",
    );
    cases.add(
        id,
        json!([]),
        "I do not know.",
        None,
        json!({law.clone(): false, "answers": true}),
        "fails: answered without calling the tool",
    );
    if with_no_answer {
        cases.add(
            id,
            json!([call_of(tool, source)]),
            "",
            Some("round_budget"),
            json!({law: true, "answers": false}),
            "fails `answers`: the rounds ran out before an answer",
        );
    }
}

/// A call for a judge case, answered verbatim so that no recording is needed yet.
fn call_of(tool: &str, source: &ToolSource) -> Value {
    let arguments: Map<String, Value> = match source {
        ToolSource::Command { arguments, .. } | ToolSource::Recorded { arguments, .. } => arguments
            .iter()
            .map(|a| (a.clone(), json!("example")))
            .collect(),
        ToolSource::Mcp { listed, .. } => key_arguments_of(&listed.input_schema)
            .into_iter()
            .map(|a| (a, json!("example")))
            .collect(),
        ToolSource::Script { parameters, .. } => parameters
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, schema)| (name.clone(), example_of(schema)))
            .collect(),
        ToolSource::Typed => match tool {
            crate::tools::weather::TOOL_NAME => [("location".to_string(), json!("Paris"))]
                .into_iter()
                .collect(),
            _ => Map::new(),
        },
    };
    json!({"tool": tool, "arguments": arguments, "result": "(the tool's answer)"})
}

/// A value of the type a script's argument takes, for a judge case: its first choice, or an
/// example of its type.
fn example_of(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => json!(1),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        Some("array") => json!([example_of(&schema["items"])]),
        _ => json!("example"),
    }
}
