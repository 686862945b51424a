//! The round loop on the scripted backend: every path through `agent::run`, without a model.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use skilleval::harness::agent::{self, AgentRequest, Budgets};
use skilleval::harness::backend::{FinishReason, Sampling};
use skilleval::harness::conversation::{Act, Script};
use skilleval::harness::skills::SkillTree;
use skilleval::harness::spill::{self, LongOutput};
use skilleval::harness::template::{Family, Message};
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::{CallFormat, RepairKind};
use skilleval::harness::tools::{Effect, Registry, ToolDef, ToolOutput};
use skilleval::harness::transcript::{StopReason, Transcript};

use common::scripted_backend::ScriptedBackend;

fn skills_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/skills")
}

fn skills() -> SkillTree {
    SkillTree::load(&skills_dir()).expect("the test skills tree loads")
}

/// A call as the Gemma family's default format writes it, rendered by the harness itself so
/// that the parser is fed exactly what the prompt's example shows.
fn call(name: &str, args: &[(&str, &str)]) -> String {
    let args: Map<String, Value> = args
        .iter()
        .map(|(key, value)| (key.to_string(), Value::from(*value)))
        .collect();
    render_call(CallFormat::Markup, name, &args)
}

fn no_parameters() -> Value {
    json!({"type": "object", "properties": {}})
}

fn one_parameter(name: &str, kind: &str) -> Value {
    json!({
        "type": "object",
        "properties": {name: {"type": kind, "description": format!("the {name}")}},
        "required": [name]
    })
}

fn read_tool(
    name: &str,
    executor: impl Fn(&Map<String, Value>) -> ToolOutput + Send + Sync + 'static,
) -> ToolDef {
    ToolDef::new(
        name,
        format!("Test tool {name}."),
        no_parameters(),
        Effect::Read,
        executor,
    )
}

/// `current_time` for everyone, `city_time` once `clock` is loaded, `save_note` once `notes` is.
fn registry() -> Registry {
    let mut tools = Registry::new();
    tools.add(read_tool("current_time", |_| ToolOutput::ok("12:00")));
    tools.add(city_time_tool(Arc::new(AtomicUsize::new(0))));
    tools.add(
        ToolDef::new(
            "save_note",
            "Store a note.",
            one_parameter("text", "string"),
            Effect::Write,
            |_| ToolOutput::ok("stored"),
        )
        .gated_by("notes"),
    );
    tools
}

/// The clock skill's tool; `runs` counts how often it actually executed.
fn city_time_tool(runs: Arc<AtomicUsize>) -> ToolDef {
    ToolDef::new(
        "city_time",
        "The local time in a city.",
        one_parameter("city", "string"),
        Effect::Read,
        move |args| {
            runs.fetch_add(1, Ordering::SeqCst);
            let city = args["city"].as_str().unwrap_or("?");
            ToolOutput::ok(format!("It is 14:05 in {city}."))
        },
    )
    .gated_by("clock")
}

/// One run's inputs, with defaults every test starts from.
struct Setup {
    family: Family,
    format: Option<CallFormat>,
    skills: SkillTree,
    tools: Registry,
    preload: Vec<String>,
    budgets: Budgets,
    constrain_calls: bool,
    long_output: LongOutput,
    user: Option<Script>,
}

impl Setup {
    fn new() -> Self {
        Setup {
            family: Family::Gemma,
            format: None,
            skills: skills(),
            tools: registry(),
            preload: Vec::new(),
            budgets: Budgets::default(),
            constrain_calls: false,
            long_output: LongOutput::Cut,
            user: None,
        }
    }

    fn user(mut self, script: &str) -> Self {
        let script: Script = serde_json::from_str(script).expect("a script");
        script.check().expect("a valid script");
        self.user = Some(script);
        self
    }

    fn spilling(mut self) -> Self {
        self.long_output = LongOutput::Spill;
        self
    }

    fn constrained(mut self) -> Self {
        self.constrain_calls = true;
        self
    }

    fn preload(mut self, skill: &str) -> Self {
        self.preload.push(skill.to_string());
        self
    }

    fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.add(tool);
        self
    }

    fn budgets(mut self, change: impl FnOnce(&mut Budgets)) -> Self {
        change(&mut self.budgets);
        self
    }

    /// Runs the loop on `replies`; the backend comes back for its prompts and leftovers.
    /// A script that runs dry ends in an error stop, which would let a test pass for the
    /// wrong reason, so that is refused here.
    fn run(&self, replies: Vec<String>) -> (Transcript, ScriptedBackend) {
        let (transcript, backend) = self.run_allowing_errors(replies);
        assert!(
            !matches!(transcript.stop, StopReason::Error(_)),
            "the run failed: {:?}",
            transcript.stop
        );
        (transcript, backend)
    }

    fn run_allowing_errors(&self, replies: Vec<String>) -> (Transcript, ScriptedBackend) {
        let mut backend = ScriptedBackend::new(self.family, replies);
        let request = AgentRequest {
            instructions: "You are a helpful assistant.",
            messages: vec![Message::user("What time is it?")],
            skills: &self.skills,
            preload: self.preload.clone(),
            tools: &self.tools,
            format: self.format,
            sampling: Sampling::default(),
            budgets: self.budgets,
            constrain_calls: self.constrain_calls,
            examples: Default::default(),
            long_output: self.long_output,
            user: self.user.as_ref(),
        };
        let transcript = agent::run(&mut backend, &request);
        (transcript, backend)
    }
}

/// The prompt without the opener of the model's turn that every prompt ends with.
fn without_model_opener(prompt: &str) -> &str {
    prompt
        .strip_suffix("<start_of_turn>model\n")
        .expect("a Gemma prompt ends by opening the model's turn")
}

#[test]
fn a_call_its_result_and_an_answer_take_one_round_each() {
    let (t, backend) = Setup::new().run(vec![
        call("current_time", &[]),
        format!("Checking once more.\n{}", call("current_time", &[])),
        "It is noon.".into(),
    ]);
    assert_eq!(t.stop, StopReason::Answered);
    assert_eq!(t.rounds.len(), 3);
    assert_eq!(t.metrics.rounds, 3);
    assert_eq!(t.reply, "It is noon.");
    assert_eq!(t.calls().count(), 2);
    assert!(t.calls().all(|c| c.result == "12:00" && !c.is_error));
    assert_eq!(t.rounds[1].prose, "Checking once more.");
    let per_round: u32 = t.rounds.iter().map(|r| r.metrics.generated_tokens).sum();
    assert_eq!(t.metrics.generated_tokens, per_round);

    let prompts = &backend.prompts;
    assert_eq!(prompts.len(), 3);
    assert!(prompts[1].contains("current_time returned:\n12:00"));
    // History only grows at its end, which is what lets the llama backend reuse the prefix.
    for pair in prompts.windows(2) {
        assert!(pair[1].starts_with(without_model_opener(&pair[0])));
    }
}

#[test]
fn the_round_budget_ends_a_run_that_keeps_calling() {
    let (t, backend) =
        Setup::new()
            .budgets(|b| b.max_rounds = 2)
            .run(vec![call("current_time", &[]); 3]);
    assert_eq!(t.stop, StopReason::RoundBudget);
    assert_eq!(t.rounds.len(), 2);
    assert!(t.rounds.iter().all(|r| r.calls.len() == 1));
    assert_eq!(t.reply, "", "a run cut off while calling has no answer");
    assert_eq!(backend.remaining(), 1);
}

#[test]
fn the_token_budget_cuts_a_long_reply_and_ends_the_run() {
    let (t, _) = Setup::new()
        .budgets(|b| {
            b.max_generated_tokens = 6;
            b.max_rounds = 10;
        })
        // The scripted backend counts words as tokens; a compact call is one word.
        .run(vec![
            "<function=current_time></function>".into(),
            "one two three four five six seven eight".into(),
        ]);
    assert_eq!(t.stop, StopReason::TokenBudget);
    assert_eq!(t.rounds.len(), 2);
    assert_eq!(t.rounds[1].finish, FinishReason::MaxTokens);
    assert_eq!(t.metrics.generated_tokens, 6);
    assert_eq!(t.rounds[1].raw.split_whitespace().count(), 5);
}

#[test]
fn a_token_budget_spent_on_calls_stops_before_the_next_round() {
    let (t, backend) = Setup::new()
        .budgets(|b| {
            b.max_generated_tokens = 2;
            b.max_rounds = 10;
        })
        .run(vec!["<function=current_time></function>".to_string(); 3]);
    assert_eq!(t.stop, StopReason::TokenBudget);
    assert_eq!(t.rounds.len(), 2);
    assert_eq!(backend.prompts.len(), 2, "no third generation is asked for");
}

#[test]
fn a_reply_cut_by_the_per_round_cap_alone_is_still_an_answer() {
    let (t, _) = Setup::new()
        .budgets(|b| b.max_tokens_per_round = 3)
        .run(vec!["It is noon in most places today.".into()]);
    assert_eq!(t.rounds[0].finish, FinishReason::MaxTokens);
    assert_eq!(t.stop, StopReason::Answered);
    assert_eq!(t.reply, "It is noon");
}

#[test]
fn the_family_end_of_turn_stops_generation() {
    let (t, _) = Setup::new().run(vec![
        "Noon.<end_of_turn>\n<start_of_turn>user\nThanks!".into()
    ]);
    assert_eq!(t.reply, "Noon.");
    assert_eq!(
        t.rounds[0].finish,
        FinishReason::Stop("<end_of_turn>".into())
    );
}

#[test]
fn an_unknown_tool_gets_an_error_naming_the_callable_tools() {
    let (t, backend) = Setup::new().run(vec![call("fly_to_moon", &[]), "Sorry.".into()]);
    let refused = &t.rounds[0].calls[0];
    assert!(refused.is_error);
    assert!(
        refused.result.contains("\"fly_to_moon\""),
        "{}",
        refused.result
    );
    for callable in ["current_time", "load_skill"] {
        assert!(refused.result.contains(callable), "{}", refused.result);
    }
    assert!(
        !refused.result.contains("city_time"),
        "a tool behind an unloaded skill is not offered: {}",
        refused.result
    );
    assert!(backend.prompts[1].contains(&refused.result));
    assert_eq!(t.stop, StopReason::Answered);
}

#[test]
fn a_gated_tool_is_refused_until_its_skill_is_loaded() {
    let runs = Arc::new(AtomicUsize::new(0));
    let paris = [("city", "Paris")];
    let (t, backend) = Setup::new()
        .tool(city_time_tool(runs.clone()))
        .budgets(|b| b.max_rounds = 5)
        .run(vec![
            call("city_time", &paris),
            call("load_skill", &[("name", "clock")]),
            call("city_time", &paris),
            "It is 14:05 in Paris.".into(),
        ]);
    assert_eq!(t.stop, StopReason::Answered);
    assert_eq!(t.rounds.len(), 4);

    let refused = &t.rounds[0].calls[0];
    assert!(refused.is_error);
    assert!(
        refused.result.contains("load_skill") && refused.result.contains("name=\"clock\""),
        "the refusal says which skill to load: {}",
        refused.result
    );

    let loaded = &t.rounds[1].calls[0];
    assert!(!loaded.is_error, "{}", loaded.result);
    assert!(loaded.result.starts_with("Skill clock loaded."));
    assert!(loaded.result.contains(&skills().get("clock").unwrap().body));

    assert_eq!(t.rounds[2].calls[0].result, "It is 14:05 in Paris.");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the refused call never ran");
    assert_eq!(t.loaded_skills, ["clock"]);

    let prompts = &backend.prompts;
    assert!(!prompts[0].contains("- city_time:"));
    assert!(prompts[0].contains("- clock: "));
    assert!(prompts[2].contains("- city_time:"));
    assert!(prompts[2].contains("- clock (loaded): "));
    assert!(prompts[2].contains("# Skill: clock"));
}

#[test]
fn a_reference_of_a_loaded_skill_is_read_on_demand_and_nothing_else_is() {
    let zones = std::fs::read_to_string(skills_dir().join("clock/references/zones.md")).unwrap();
    let notes_body = skills().get("notes").unwrap().body.clone();
    let reference =
        |skill: &str, name: &str| call("load_skill_reference", &[("skill", skill), ("name", name)]);
    let requests = [
        reference("clock", "zones"),
        reference("clock", "zones.md"),
        reference("clock", "../notes/SKILL"),
        reference("clock", ".."),
        reference("clock", "calendar"),
        reference("notes", "zones"),
    ];
    let (t, backend) = Setup::new()
        .preload("clock")
        .run(vec![requests.join("\n"), "Done.".into()]);

    assert!(backend.prompts[0].contains(
        "References: call load_skill_reference with skill=\"clock\" and one of these names: zones"
    ));
    let calls = &t.rounds[0].calls;
    assert_eq!(calls.len(), requests.len());
    for found in &calls[..2] {
        assert!(!found.is_error, "{}", found.result);
        assert_eq!(found.result, zones);
    }
    for escape in &calls[2..4] {
        assert!(escape.is_error);
        assert!(escape.result.contains("no reference"), "{}", escape.result);
        assert!(!escape.result.contains(&notes_body));
    }
    let unknown = &calls[4];
    assert!(unknown.is_error);
    assert!(
        unknown.result.contains("zones"),
        "the refusal lists the skill's references: {}",
        unknown.result
    );
    let not_loaded = &calls[5];
    assert!(not_loaded.is_error);
    assert!(
        not_loaded.result.contains("load_skill"),
        "{}",
        not_loaded.result
    );
}

#[test]
fn the_first_prompt_carries_the_index_the_preloaded_body_and_the_tools() {
    let tree = skills();
    let (t, backend) = Setup::new()
        .preload("clock")
        .preload("no_such_skill")
        .run(vec!["Hello.".into()]);
    assert_eq!(t.loaded_skills, ["clock"], "an unknown name is not loaded");
    let prompt = &backend.prompts[0];
    let clock = tree.get("clock").unwrap();
    let notes = tree.get("notes").unwrap();
    assert!(prompt.contains("You are a helpful assistant."));
    assert!(prompt.contains("# Calling tools\n"));
    assert!(prompt.contains(&format!("- clock (loaded): {}", clock.meta.description)));
    assert!(prompt.contains(&format!("- notes: {}", notes.meta.description)));
    assert!(prompt.contains(&format!("# Skill: clock\n{}", clock.body)));
    assert!(
        !prompt.contains(&notes.body),
        "an unloaded skill shows only in the index"
    );
    for offered in [
        "current_time",
        "city_time",
        "load_skill",
        "load_skill_reference",
    ] {
        assert!(
            prompt.contains(&format!("- {offered}: ")),
            "{offered} missing"
        );
    }
    assert!(!prompt.contains("- save_note"));
    assert!(prompt.contains("    city (string, required): the city"));
    assert!(prompt.ends_with("What time is it?<end_of_turn>\n<start_of_turn>model\n"));
}

/// Every file under `root`, with its bytes.
fn files_under(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

fn copy_tree(from: &Path, to: &Path) {
    for (path, bytes) in files_under(from) {
        let target = to.join(path.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
}

const BODY_OVERLAY: &str = "# Clock\n\nGive the time in 24-hour form and nothing else.";

#[test]
fn overlays_leave_the_tree_on_disk_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&skills_dir(), dir.path());
    let before = files_under(dir.path());
    assert!(before.len() >= 3);

    let tree = SkillTree::load(dir.path()).unwrap();
    let overlay_path = dir.path().join("clock/SKILL.md");
    let body_only = tree
        .with_overlay("clock", BODY_OVERLAY, &overlay_path)
        .unwrap();
    let whole = tree
        .with_overlay(
            "notes",
            "---\nname: notes\ndescription: Keeps nothing.\n---\nDo not save notes.",
            &dir.path().join("notes/SKILL.md"),
        )
        .unwrap();
    for overlaid in [body_only, whole] {
        let mut setup = Setup::new().preload("clock").preload("notes");
        setup.skills = overlaid;
        let (t, _) = setup.run(vec![
            call(
                "load_skill_reference",
                &[("skill", "clock"), ("name", "zones")],
            ),
            "Done.".into(),
        ]);
        assert!(!t.rounds[0].calls[0].is_error);
    }
    assert_eq!(files_under(dir.path()), before);
    assert_eq!(SkillTree::load(dir.path()).unwrap(), tree);
}

#[test]
fn a_body_only_overlay_replaces_the_body_and_keeps_the_front_matter() {
    let tree = skills();
    let source = Path::new("variant/clock.md");
    let overlaid = tree.with_overlay("clock", BODY_OVERLAY, source).unwrap();
    let original = tree.get("clock").unwrap();
    let clock = overlaid.get("clock").unwrap();
    assert_eq!(clock.meta, original.meta);
    assert_eq!(clock.body, BODY_OVERLAY);
    assert_eq!(clock.source, source);
    assert_eq!(clock.reference_names(), original.reference_names());
    assert_eq!(overlaid.names(), tree.names());

    let mut setup = Setup::new().preload("clock");
    setup.skills = overlaid;
    let (_, backend) = setup.run(vec!["Done.".into()]);
    let prompt = &backend.prompts[0];
    assert!(prompt.contains(&format!("# Skill: clock\n{BODY_OVERLAY}")));
    assert!(!prompt.contains(&original.body));
    assert!(prompt.contains(&format!("- clock (loaded): {}", original.meta.description)));
}

#[test]
fn a_front_matter_overlay_can_add_a_new_skill() {
    let tree = skills();
    let text =
        "---\nname: stopwatch\ndescription: Times short intervals.\n---\nCount the seconds aloud.";
    let overlaid = tree
        .with_overlay("stopwatch", text, Path::new("variant/stopwatch.md"))
        .unwrap();
    assert_eq!(overlaid.names(), ["clock", "notes", "stopwatch"]);
    assert_eq!(
        tree.names(),
        ["clock", "notes"],
        "the base tree is unchanged"
    );
    let stopwatch = overlaid.get("stopwatch").unwrap();
    assert_eq!(stopwatch.dir, None);
    assert!(stopwatch.reference_names().is_empty());

    let mut setup = Setup::new();
    setup.skills = overlaid;
    let (t, backend) = setup.run(vec![
        call("load_skill", &[("name", "stopwatch")]),
        "One, two.".into(),
    ]);
    assert!(backend.prompts[0].contains("- stopwatch: Times short intervals."));
    assert!(t.rounds[0].calls[0]
        .result
        .contains("Count the seconds aloud."));
    assert_eq!(t.loaded_skills, ["stopwatch"]);
}

#[test]
fn a_front_matter_overlay_of_an_existing_skill_replaces_its_description_and_keeps_references() {
    let tree = skills();
    let text = "---\nname: clock\ndescription: Reads clocks around the world.\n---\nAsk city_time.";
    let overlaid = tree
        .with_overlay("clock", text, Path::new("variant/clock.md"))
        .unwrap();
    let clock = overlaid.get("clock").unwrap();
    assert_eq!(clock.meta.description, "Reads clocks around the world.");
    assert!(
        clock.meta.tools.is_empty(),
        "the whole front matter is replaced"
    );
    assert_eq!(clock.reference_names(), ["zones"]);
}

/// A tool that returns `text` whatever it is asked.
fn constant_tool(name: &str, text: &'static str) -> ToolDef {
    read_tool(name, move |_| ToolOutput::ok(text))
}

#[test]
fn a_long_tool_result_is_cut_to_the_budget_with_a_marker() {
    const LIMIT: usize = 100;
    // Two bytes per character: the budget counts characters, not bytes.
    let long = "é".repeat(250);
    let long_len = long.chars().count();
    let (t, backend) = Setup::new()
        .tool(read_tool("read_log", move |_| ToolOutput::ok(long.clone())))
        .budgets(|b| b.tool_output_chars = LIMIT)
        .run(vec![call("read_log", &[]), "Long log.".into()]);
    let record = &t.rounds[0].calls[0];
    let cut = long_len - LIMIT;
    assert_eq!(record.truncated_chars, cut);
    assert!(record.result.starts_with(&"é".repeat(LIMIT)));
    assert!(!record.result.starts_with(&"é".repeat(LIMIT + 1)));
    let marker = format!("[… {cut} more characters cut]");
    assert!(record.result.ends_with(&marker), "{}", record.result);
    assert!(backend.prompts[1].contains(&marker));
}

#[test]
fn a_result_within_the_budget_is_kept_whole() {
    let exact = "x".repeat(40);
    assert_eq!(spill::fit_tool_output(&exact, 40), (exact.clone(), 0));
    let (cut_text, cut) = spill::fit_tool_output(&exact, 39);
    assert_eq!(cut, 1);
    assert!(cut_text.starts_with(&"x".repeat(39)));
}

#[test]
fn an_empty_tool_result_is_stated_as_empty() {
    let (t, backend) = Setup::new()
        .tool(constant_tool("read_log", "  \n "))
        .run(vec![call("read_log", &[]), "Nothing there.".into()]);
    let record = &t.rounds[0].calls[0];
    assert!(!record.is_error);
    assert_eq!(record.result, "(the tool returned nothing)");
    assert_eq!(record.truncated_chars, 0);
    assert!(backend.prompts[1].contains("read_log returned:\n(the tool returned nothing)"));
}

#[test]
fn a_described_call_is_sent_back_once_and_a_second_description_is_the_answer() {
    let (t, backend) = Setup::new().run(vec![
        "I will call current_time to find out.".into(),
        "I will call current_time now.".into(),
        call("current_time", &[]),
    ]);
    assert_eq!(t.rounds.len(), 2);
    let reask = t.rounds[0]
        .reask
        .as_deref()
        .expect("the first reply is re-asked");
    assert!(reask.contains("current_time"));
    assert!(
        reask.contains("<function=current_time>"),
        "the re-ask shows the call's exact form: {reask}"
    );
    assert!(backend.prompts[1].contains(reask));
    assert_eq!(t.rounds[1].reask, None);
    assert_eq!(t.stop, StopReason::Answered);
    assert_eq!(t.reply, "I will call current_time now.");
    assert_eq!(backend.remaining(), 1);
}

#[test]
fn a_re_asked_model_that_makes_the_call_carries_on() {
    let (t, _) = Setup::new().run(vec![
        "Let me use current_time.".into(),
        call("current_time", &[]),
        "It is noon.".into(),
    ]);
    assert!(t.rounds[0].reask.is_some());
    assert_eq!(t.rounds[1].calls[0].result, "12:00");
    assert_eq!(t.reply, "It is noon.");
    assert_eq!(t.stop, StopReason::Answered);
}

#[test]
fn without_re_asks_a_described_call_is_the_answer() {
    let (t, _) = Setup::new()
        .budgets(|b| b.max_reasks = 0)
        .run(vec!["I will call current_time to find out.".into()]);
    assert_eq!(t.rounds.len(), 1);
    assert_eq!(t.rounds[0].reask, None);
    assert_eq!(t.stop, StopReason::Answered);
}

/// `add_minutes(minutes: integer)`; `runs` counts executions, and the result says whether the
/// executor got a real integer.
fn add_minutes_tool(runs: Arc<AtomicUsize>) -> ToolDef {
    ToolDef::new(
        "add_minutes",
        "Add minutes to the current time.",
        one_parameter("minutes", "integer"),
        Effect::Read,
        move |args| {
            runs.fetch_add(1, Ordering::SeqCst);
            match args["minutes"].as_i64() {
                Some(minutes) => ToolOutput::ok(format!("added {minutes}")),
                None => ToolOutput::error("minutes is not an integer"),
            }
        },
    )
}

#[test]
fn coerced_arguments_are_recorded_as_repairs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (t, _) = Setup::new().tool(add_minutes_tool(runs.clone())).run(vec![
        call("add_minutes", &[("minutes", "15")]),
        "Done.".into(),
    ]);
    let record = &t.rounds[0].calls[0];
    assert_eq!(record.raw_arguments, json!({"minutes": "15"}));
    assert_eq!(record.arguments, json!({"minutes": 15}));
    assert_eq!(record.repairs.len(), 1);
    assert_eq!(record.repairs[0].kind, RepairKind::CoercedArgument);
    assert!(record.repairs[0].detail.starts_with("minutes:"));
    assert!(!record.is_error);
    assert_eq!(record.result, "added 15");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_refused_coercion_is_returned_to_the_model_and_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (t, backend) = Setup::new().tool(add_minutes_tool(runs.clone())).run(vec![
        call("add_minutes", &[("minutes", "soon")]),
        "Sorry.".into(),
    ]);
    let record = &t.rounds[0].calls[0];
    assert!(record.is_error);
    assert!(record.result.contains("\"minutes\""), "{}", record.result);
    assert!(record.result.contains("integer"), "{}", record.result);
    assert!(
        record.result.contains("Call add_minutes again"),
        "{}",
        record.result
    );
    assert!(record.repairs.is_empty());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(backend.prompts[1].contains(&record.result));
}

#[test]
fn parse_repairs_are_recorded_on_the_round() {
    let fenced = format!("```xml\n{}\n```", call("current_time", &[]));
    let unclosed = "Checking.\n<function=current_time>\n";
    let (t, _) = Setup::new().run(vec![fenced, unclosed.into(), "Noon.".into()]);
    assert_eq!(t.rounds.len(), 3);
    let kinds = |round: usize| -> Vec<RepairKind> {
        t.rounds[round].repairs.iter().map(|r| r.kind).collect()
    };
    assert_eq!(kinds(0), [RepairKind::StrippedFence]);
    assert_eq!(kinds(1), [RepairKind::ClosedFinalCall]);
    assert!(t.calls().all(|c| c.result == "12:00"));
}

#[test]
fn a_malformed_call_is_not_run_and_is_re_asked_as_a_described_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (t, _) = Setup::new().tool(add_minutes_tool(runs.clone())).run(vec![
        // A parameter opener inside a value: ambiguous, so not run.
        "<function=add_minutes><parameter=minutes>5<parameter=unit>min</parameter></function>"
            .into(),
        call("add_minutes", &[("minutes", "5")]),
        "Added.".into(),
    ]);
    let broken = &t.rounds[0];
    assert!(broken.calls.is_empty());
    assert_eq!(broken.problems.len(), 1);
    assert!(
        broken.problems[0].contains("</parameter>"),
        "{:?}",
        broken.problems
    );
    let reask = broken
        .reask
        .as_deref()
        .expect("the broken call is re-asked");
    assert!(reask.contains("<function=add_minutes>"));
    assert_eq!(t.rounds[1].calls[0].result, "added 5");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "only the well-formed call ran"
    );
    assert_eq!(t.stop, StopReason::Answered);
}

#[test]
fn a_malformed_call_without_a_tool_name_is_the_answer() {
    let (t, _) = Setup::new().run(vec!["<function=>nothing</function>".into()]);
    assert_eq!(t.rounds.len(), 1);
    assert!(t.rounds[0].calls.is_empty());
    assert_eq!(t.rounds[0].problems.len(), 1);
    assert_eq!(t.rounds[0].reask, None);
    assert_eq!(t.stop, StopReason::Answered);
    assert_eq!(t.reply, "<function=>nothing</function>");
}

#[test]
fn a_backend_error_ends_the_run_and_keeps_earlier_rounds() {
    // One reply, then the scripted backend fails: it has nothing left to say.
    let (t, _) = Setup::new().run_allowing_errors(vec![call("current_time", &[])]);
    let StopReason::Error(message) = &t.stop else {
        panic!("expected an error stop, got {:?}", t.stop);
    };
    assert!(!message.is_empty());
    assert_eq!(t.rounds.len(), 1);
    assert_eq!(t.metrics.rounds, 1);
    assert_eq!(t.rounds[0].calls[0].result, "12:00");
    assert_eq!(t.reply, "");
}

/// A meeting point for `expected` threads that gives up after a timeout instead of hanging.
struct Rendezvous {
    arrived: Mutex<usize>,
    everyone_here: Condvar,
    expected: usize,
}

impl Rendezvous {
    fn new(expected: usize) -> Arc<Self> {
        Arc::new(Rendezvous {
            arrived: Mutex::new(0),
            everyone_here: Condvar::new(),
            expected,
        })
    }

    /// Whether everyone arrived before `timeout`.
    fn meet(&self, timeout: Duration) -> bool {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        self.everyone_here.notify_all();
        let (_arrived, waited) = self
            .everyone_here
            .wait_timeout_while(arrived, timeout, |n| *n < self.expected)
            .unwrap();
        !waited.timed_out()
    }
}

#[test]
fn reads_in_one_round_run_concurrently() {
    // Each read waits for the other: run one after the other, the first would time out alone.
    let rendezvous = Rendezvous::new(2);
    let sensor = |name: &str| {
        let rendezvous = rendezvous.clone();
        read_tool(name, move |_| {
            if rendezvous.meet(Duration::from_secs(20)) {
                ToolOutput::ok("met")
            } else {
                ToolOutput::error("waited alone")
            }
        })
    };
    let (t, _) = Setup::new()
        .tool(sensor("left_sensor"))
        .tool(sensor("right_sensor"))
        .run(vec![
            format!(
                "{}\n{}",
                call("right_sensor", &[]),
                call("left_sensor", &[])
            ),
            "Both met.".into(),
        ]);
    let calls = &t.rounds[0].calls;
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["right_sensor", "left_sensor"],
        "results keep call order"
    );
    for record in calls {
        assert_eq!(record.result, "met", "{} ran alone", record.name);
    }
}

#[test]
fn writes_run_one_after_another_in_call_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let writer = |name: &'static str| {
        let log = log.clone();
        ToolDef::new(
            name,
            "Append to the log.",
            no_parameters(),
            Effect::Write,
            move |_| {
                log.lock().unwrap().push(name);
                ToolOutput::ok("written")
            },
        )
    };
    let (t, _) = Setup::new()
        .tool(writer("write_b"))
        .tool(writer("write_a"))
        .run(vec![
            [
                call("write_b", &[]),
                call("write_a", &[]),
                call("write_b", &[]),
            ]
            .join("\n"),
            "Written.".into(),
        ]);
    assert_eq!(t.rounds[0].calls.len(), 3);
    assert_eq!(*log.lock().unwrap(), ["write_b", "write_a", "write_b"]);
}

#[test]
fn every_family_reads_the_call_format_its_prompt_teaches() {
    let json_call = r#"<tool_call>{"name": "current_time", "arguments": {}}</tool_call>"#;
    let cases = [
        (
            Family::Gemma,
            None,
            call("current_time", &[]),
            "<function=load_skill>\n<parameter=name>\nclock\n</parameter>",
        ),
        (
            Family::ChatMl,
            None,
            json_call.to_string(),
            "<tool_call>\n{\"name\": \"load_skill\", \"arguments\": {\"name\": \"clock\"}}",
        ),
        (
            Family::Llama3,
            None,
            call("current_time", &[]),
            "<function=load_skill>\n<parameter=name>\nclock\n</parameter>",
        ),
        (
            Family::Gemma,
            Some(CallFormat::PythonList),
            "[current_time()]".to_string(),
            "[load_skill(name=\"clock\")]",
        ),
    ];
    for (family, format, reply, taught) in cases {
        let mut setup = Setup::new();
        setup.family = family;
        setup.format = format;
        let (t, backend) = setup.run(vec![reply, "Noon.".into()]);
        let case = format!("{family:?} {format:?}");
        assert!(backend.prompts[0].contains(taught), "{case}");
        assert_eq!(t.stop, StopReason::Answered, "{case}");
        assert_eq!(t.rounds[0].calls.len(), 1, "{case}");
        assert_eq!(t.rounds[0].calls[0].result, "12:00", "{case}");
    }
}

#[test]
fn a_transcript_survives_json_and_back() {
    let runs = Arc::new(AtomicUsize::new(0));
    let setup = Setup::new()
        .tool(add_minutes_tool(runs))
        .budgets(|b| b.max_rounds = 6);
    let (mut answered, _) = setup.run(vec![
        "I will call add_minutes with minutes 5.".into(),
        format!("```\n{}\n```", call("add_minutes", &[("minutes", "5")])),
        call("city_time", &[("city", "Oslo")]),
        call("add_minutes", &[("minutes", "later")]),
        "Done.".into(),
    ]);
    let (mut failed, _) = setup.run_allowing_errors(vec![call("current_time", &[])]);
    for t in [&mut answered, &mut failed] {
        // Measured seconds are arbitrary floats, which serde_json's default parser may read
        // back one bit off; exact binary fractions keep the comparison about the structure.
        t.metrics.wall_secs = 0.5;
        t.metrics.tool_secs = 0.25;
        let json = serde_json::to_string(&*t).unwrap();
        let back: Transcript = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, &*t);
    }
    assert!(answered.rounds[0].reask.is_some());
    assert_eq!(answered.rounds[1].calls[0].repairs.len(), 1);
    assert!(answered.rounds[2].calls[0].is_error);
    let value = serde_json::to_value(&answered).unwrap();
    assert_eq!(value["stop"], json!({"kind": "answered"}));
    let value = serde_json::to_value(&failed).unwrap();
    assert_eq!(value["stop"]["kind"], "error");
    assert!(value["stop"]["detail"].is_string());
}

#[test]
fn the_first_round_prompt_of_each_family_is_stable() {
    for family in Family::ALL {
        let mut setup = Setup::new().preload("clock");
        setup.family = family;
        let (_, backend) = setup.run(vec!["Noon.".into()]);
        insta::assert_snapshot!(
            format!("first_round_prompt_{}", family.name()),
            &backend.prompts[0]
        );
    }
}

use skilleval::harness::toolcall::render::PLACEHOLDERS;

#[test]
fn no_prompt_or_re_ask_holds_a_placeholder() {
    let formats = [
        None,
        Some(CallFormat::Markup),
        Some(CallFormat::JsonTag),
        Some(CallFormat::PythonList),
    ];
    for family in Family::ALL {
        for format in formats {
            for preload in [&[][..], &["clock"][..], &["clock", "notes"][..]] {
                let mut setup = Setup::new();
                setup.family = family;
                setup.format = format;
                for skill in preload {
                    setup = setup.preload(skill);
                }
                // A described call draws the re-ask, whose text the second prompt holds.
                let (t, backend) =
                    setup.run(vec!["I will call current_time now.".into(), "Noon.".into()]);
                assert!(t.rounds[0].reask.is_some(), "{family:?} {format:?}");
                for prompt in &backend.prompts {
                    for placeholder in PLACEHOLDERS {
                        assert!(
                            !prompt.contains(placeholder),
                            "{family:?} {format:?} {preload:?}: {placeholder:?} in\n{prompt}"
                        );
                    }
                }
            }
        }
    }
}

/// The clock skill with one worked example in its body.
fn clock_with_an_example() -> SkillTree {
    let body = "Call city_time for the time in a city.\n\n```example\nUser: time in Oslo?\nAssistant: <function=city_time>\n<parameter=city>\nOslo\n</parameter>\n</function>\nTool: It is 09:10 in Oslo.\nAssistant: It is 09:10 in Oslo.\n```\n";
    skills()
        .with_overlay("clock", body, Path::new("clock-example.md"))
        .expect("the overlay reads")
}

#[test]
fn a_loaded_skill_s_examples_come_as_earlier_turns_in_the_run_s_syntax() {
    let mut setup = Setup::new().preload("clock");
    setup.skills = clock_with_an_example();
    setup.family = Family::Transcript;
    let (_, backend) = setup.run(vec!["Noon.".into()]);
    let prompt = &backend.prompts[0];
    let turns = "User: time in Oslo?\nAssistant: <function=city_time>\n<parameter=city>\nOslo\n</parameter>\n</function>\nTool: city_time returned:\nIt is 09:10 in Oslo.\nAssistant: It is 09:10 in Oslo.\nUser: What time is it?\nAssistant:";
    assert!(prompt.ends_with(turns), "{prompt}");
    assert!(
        prompt.contains("# Skill: clock\nCall city_time for the time in a city.\n\nReferences"),
        "{prompt}"
    );
    assert!(!prompt.contains("```"), "{prompt}");
    // The syntax is shown with the example's real call.
    assert!(
        prompt.contains("A call to city_time:\n<function=city_time>\n<parameter=city>\nOslo\n"),
        "{prompt}"
    );

    setup.family = Family::ChatMl;
    let (_, backend) = setup.run(vec!["Noon.".into()]);
    let prompt = &backend.prompts[0];
    assert!(prompt.contains("<|im_start|>user\ntime in Oslo?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"city_time\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call><|im_end|>\n<|im_start|>tool\ncity_time returned:\nIt is 09:10 in Oslo.<|im_end|>"), "{prompt}");
}

#[test]
fn examples_of_a_skill_not_loaded_are_not_shown() {
    let mut setup = Setup::new();
    setup.skills = clock_with_an_example();
    let (_, backend) = setup.run(vec!["Noon.".into()]);
    assert!(!backend.prompts[0].contains("Oslo"));
}

#[test]
fn a_skill_whose_example_does_not_read_is_refused_with_the_file() {
    let error = skills()
        .with_overlay(
            "clock",
            "```example\nAssistant: hi\n```",
            Path::new("broken.md"),
        )
        .unwrap_err();
    let text = format!("{error:#}");
    assert!(
        text.contains("broken.md") && text.contains("example block 1"),
        "{text}"
    );
}

#[test]
fn constrained_calls_send_each_round_a_grammar_of_what_it_offers() {
    let setup = Setup::new().constrained();
    let (transcript, backend) = setup.run(vec![
        call("load_skill", &[("name", "clock")]),
        call("city_time", &[("city", "Paris")]),
        "It is 14:05 in Paris.".into(),
    ]);
    assert_eq!(transcript.stop, StopReason::Answered);
    let grammars: Vec<String> = backend
        .grammars
        .iter()
        .map(|g| g.as_ref().expect("every round has a grammar").gbnf.clone())
        .collect();
    assert_eq!(grammars.len(), 3);
    // First round: the ungated tool and load_skill, its name one of the tree's skills.
    assert!(
        grammars[0].contains("<function=current_time>"),
        "{}",
        grammars[0]
    );
    assert!(
        grammars[0].contains("<function=load_skill>"),
        "{}",
        grammars[0]
    );
    assert!(
        grammars[0].contains("(\"clock\" | \"notes\")"),
        "{}",
        grammars[0]
    );
    assert!(
        !grammars[0].contains("<function=city_time>"),
        "{}",
        grammars[0]
    );
    // Once clock is loaded, its tool is offered, and so is loading the other skill.
    assert!(
        grammars[1].contains("<function=city_time>"),
        "{}",
        grammars[1]
    );
    assert!(
        !grammars[1].contains("<function=save_note>"),
        "{}",
        grammars[1]
    );
}

#[test]
fn without_constrained_calls_no_grammar_is_sent() {
    let (_, backend) = Setup::new().run(vec!["Noon.".into()]);
    assert_eq!(backend.grammars, vec![None]);
}

/// A deferred `build_log` in group `ci`, answering with the build's id.
fn build_log_tool() -> ToolDef {
    ToolDef::new(
        "build_log",
        "The log of one build.",
        one_parameter("build", "string"),
        Effect::Read,
        |args| {
            ToolOutput::ok(format!(
                "log of build {}",
                args["build"].as_str().unwrap_or("?")
            ))
        },
    )
    .deferred_in("ci")
}

#[test]
fn a_deferred_tool_is_a_name_until_tool_search_loads_it_and_the_system_text_never_changes() {
    let (t, backend) = Setup::new().tool(build_log_tool()).run(vec![
        call("build_log", &[("build", "7")]),
        call("tool_search", &[("query", "ci")]),
        call("build_log", &[("build", "7")]),
        "Build 7 is logged.".into(),
    ]);
    let results: Vec<(&str, bool)> = t.calls().map(|c| (c.result.as_str(), c.is_error)).collect();
    assert_eq!(
        results[0],
        (
            "Tool build_log is not described yet; call tool_search with query=\"build_log\" first.",
            true
        )
    );
    assert_eq!(
        results[1],
        (
            "Loaded:\n- build_log: The log of one build.\n    build (string, required): the build",
            false
        )
    );
    assert_eq!(results[2], ("log of build 7", false));
    let first = without_model_opener(&backend.prompts[0]);
    assert!(first.contains("# More tools\n"), "{first}");
    assert!(first.contains("\n- ci: build_log"), "{first}");
    assert!(first.contains("- tool_search: "), "{first}");
    assert!(
        !first.contains("- build_log: "),
        "only the name is shown: {first}"
    );
    for later in &backend.prompts[1..] {
        assert!(
            later.starts_with(first),
            "the prompt before grows only at its end"
        );
    }
}

#[test]
fn a_spilled_result_is_read_on_from_its_file_to_its_end() {
    let long: String = ('a'..='z').cycle().take(50).collect();
    let shown = long.clone();
    let (t, backend) = Setup::new()
        .spilling()
        .budgets(|b| b.tool_output_chars = 20)
        .tool(read_tool("dump", move |_| ToolOutput::ok(shown.clone())))
        .run(vec![
            call("dump", &[]),
            call(
                "read_tool_output",
                &[("file", "tool-output-1.txt"), ("offset", "20")],
            ),
            call(
                "read_tool_output",
                &[("file", "tool-output-1.txt"), ("offset", "40")],
            ),
            "Done.".into(),
        ]);
    let results: Vec<&str> = t.calls().map(|c| c.result.as_str()).collect();
    assert_eq!(
        results[0],
        format!("{}\n[… 30 more characters in tool-output-1.txt; call read_tool_output with file=\"tool-output-1.txt\" and offset=20 to read on]", &long[..20])
    );
    assert_eq!(t.calls().next().unwrap().truncated_chars, 30);
    assert!(
        results[1].starts_with(&long[20..40]) && results[1].ends_with("offset=40 to read on]"),
        "{results:?}"
    );
    assert_eq!(results[2], &long[40..]);
    assert!(backend.prompts[0].contains("- read_tool_output: "));
}

#[test]
fn without_spilling_read_tool_output_is_not_offered_and_a_long_result_is_cut() {
    let (t, backend) = Setup::new()
        .budgets(|b| b.tool_output_chars = 5)
        .tool(read_tool("dump", |_| ToolOutput::ok("0123456789")))
        .run(vec![call("dump", &[]), "Done.".into()]);
    assert_eq!(
        t.calls().next().unwrap().result,
        "01234\n[… 5 more characters cut]"
    );
    assert!(!backend.prompts[0].contains("read_tool_output"));
    assert!(!backend.prompts[0].contains("tool_search"));
}

/// A `files` world for conversation tests: `make_file` writes, `list_files` lists what the
/// writes before the call made.
fn files_world() -> (ToolDef, ToolDef) {
    let make = ToolDef::new(
        "make_file",
        "Create a file.",
        one_parameter("name", "string"),
        Effect::Write,
        |_| ToolOutput::ok("unused"),
    )
    .with_state(|args, _| ToolOutput::ok(format!("created {}", args["name"].as_str().unwrap())));
    let list = ToolDef::new(
        "list_files",
        "List the files.",
        no_parameters(),
        Effect::Read,
        |_| ToolOutput::ok("unused"),
    )
    .with_state(|_, writes| {
        let names: Vec<&str> = writes
            .iter()
            .filter_map(|w| w.arguments["name"].as_str())
            .collect();
        ToolOutput::ok(format!("files: {}", names.join(", ")))
    });
    (make, list)
}

#[test]
fn a_question_gets_the_scripted_reply_and_the_conversation_goes_on() {
    let setup = Setup::new().preload("clock").user(
        r#"{"replies":[{"on":"question","say":"Lisbon, please."}],"default":"I don't know.","turns":2}"#,
    );
    let (t, backend) = setup.run(vec![
        "Which city do you mean?".into(),
        call("city_time", &[("city", "Lisbon")]),
        "It is 14:05 in Lisbon.".into(),
    ]);
    assert_eq!(t.stop, StopReason::Answered);
    assert_eq!(t.rounds.len(), 3);
    let turn = t.rounds[0].user.as_ref().expect("the user replied");
    assert_eq!(
        (turn.on, turn.said.as_str()),
        (Act::Question, "Lisbon, please.")
    );
    // The second round's prompt is what the harness shows after the user's reply.
    let shown = without_model_opener(&backend.prompts[1]);
    assert!(
        shown.ends_with("Which city do you mean?<end_of_turn>\n<start_of_turn>user\nLisbon, please.<end_of_turn>\n"),
        "{shown}"
    );
    assert_eq!(t.reply, "It is 14:05 in Lisbon.");
    assert!(
        t.rounds[2].user.is_none(),
        "an answer with no `answer` reply ends it"
    );
}

#[test]
fn without_a_script_a_question_ends_the_run_as_before() {
    let (t, backend) = Setup::new().run(vec!["Which city do you mean?".into()]);
    assert_eq!(t.stop, StopReason::Answered);
    assert_eq!(t.rounds.len(), 1);
    assert!(t.rounds[0].user.is_none());
    assert_eq!(backend.prompts.len(), 1);
}

#[test]
fn the_turn_budget_ends_a_conversation_that_keeps_asking() {
    let setup = Setup::new()
        .user(r#"{"default":"I don't know.","turns":2}"#)
        .budgets(|b| b.max_rounds = 10);
    let (t, backend) = setup.run(vec![
        "Which city?".into(),
        "Which city, again?".into(),
        "And which city?".into(),
    ]);
    assert_eq!(t.user_turns().count(), 2);
    assert_eq!(t.rounds.len(), 3);
    assert_eq!(backend.remaining(), 0);
    assert_eq!(t.reply, "And which city?");
}

#[test]
fn a_write_waits_for_approval_and_the_refusal_is_what_the_model_sees() {
    let (make, list) = files_world();
    let setup = Setup::new()
        .tool(make)
        .tool(list)
        .user(r#"{"replies":[{"on":"approval","say":"Yes, go ahead."}],"approve":"when_confirmed","turns":2}"#)
        .budgets(|b| b.max_rounds = 8);
    let (t, backend) = setup.run(vec![
        call("make_file", &[("name", "a.txt")]),
        "Shall I create a.txt?".into(),
        call("make_file", &[("name", "a.txt")]),
        call("list_files", &[]),
        "Done: a.txt.".into(),
    ]);
    let calls: Vec<_> = t.calls().collect();
    assert_eq!(calls[0].approved, Some(false));
    assert!(calls[0].is_error);
    assert!(
        calls[0].result.contains("has not approved"),
        "{}",
        calls[0].result
    );
    assert!(
        backend.prompts[1].contains(&calls[0].result),
        "the model saw the refusal"
    );
    assert_eq!(t.rounds[1].user.as_ref().unwrap().on, Act::Approval);
    assert_eq!(calls[1].approved, Some(true));
    assert_eq!(calls[1].result, "created a.txt");
    // The list answers from the write that ran, not the refused one.
    assert_eq!(calls[2].result, "files: a.txt");
    assert_eq!(calls[2].approved, None, "a read asks no approval");
}

#[test]
fn a_user_who_never_approves_leaves_the_world_unchanged() {
    let (make, list) = files_world();
    let setup = Setup::new()
        .tool(make)
        .tool(list)
        .user(r#"{"default":"No.","approve":"never"}"#)
        .budgets(|b| b.max_rounds = 6);
    let (t, _) = setup.run(vec![
        call("make_file", &[("name", "a.txt")]),
        call("list_files", &[]),
        "Nothing was created.".into(),
    ]);
    let calls: Vec<_> = t.calls().collect();
    assert!(calls[0].result.contains("refused"), "{}", calls[0].result);
    assert_eq!(calls[1].result, "files: ");
}
