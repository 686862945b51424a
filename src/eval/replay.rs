//! Turns a pack's tools into harness tools answered from fixtures, or from the live service
//! when recording; loads and checks a pack's fixtures; finds failed recordings, which are errors
//! of their unit; asks the MCP servers a pack reaches by URL before a recording run's model loads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::fixture_store::{gap_message, Fixture, FixtureStore, Recorded};
use super::pack::{Pack, ToolSpec};
use super::record::journal::JournalEntry;
use crate::harness::tools::{Effect, PriorWrite, Registry, ToolDef, ToolOutput};
use crate::harness::transcript::Transcript;
use crate::tools::command::CommandAnswer;
use crate::tools::mcp::{ListedTool, McpConnection, McpServerSpec};
use crate::tools::weather;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordMode {
    /// Replay only; a call with no recording is a gap.
    Off,
    /// Ask the live service for calls with no recording and keep its answers.
    Gaps,
    /// Ask the live service for every call and replace the recordings.
    All,
}

/// How a live service is reached while recording; tests point it at a loopback server. The MCP
/// servers a recording run needs are started at their first call and stopped when the last
/// handle is dropped, at the end of the run.
#[derive(Clone, Default)]
pub struct LiveServices {
    pub weather: Option<Arc<weather::WeatherService>>,
    mcp: Arc<Mutex<BTreeMap<McpServerSpec, McpStarted>>>,
}

#[derive(Clone)]
struct McpStarted {
    connection: Arc<McpConnection>,
    listed: Vec<ListedTool>,
}

/// A live answer, as it is kept in a fixture.
struct LiveAnswer {
    status: u16,
    body: Value,
    /// The exact text, where `body` is JSON printed otherwise than compactly.
    printed: Option<String>,
    note: Option<String>,
    recorded_with: String,
    /// False for a death by a signal or a time-out: no answer of the tool's own, which never
    /// replaces a recording on file.
    tool_answered: bool,
}

impl LiveServices {
    /// The weather service at another address (a test's loopback server).
    pub fn with_weather(weather: Arc<weather::WeatherService>) -> Self {
        LiveServices {
            weather: Some(weather),
            ..Default::default()
        }
    }

    /// The live answer to a call made after `writes`. A pack with writes asks its command
    /// tools in a scratch folder of their own, brought to the call's state by running those
    /// writes first, so that the recording is what that call gets in that state.
    fn fetch(
        &self,
        spec: &ToolSpec,
        args: &Map<String, Value>,
        world: Option<(&[ToolSpec], &[PriorWrite])>,
    ) -> anyhow::Result<LiveAnswer> {
        if let Some(mut program) = spec.program_for(args) {
            let scratch = match world {
                Some((specs, writes)) => Some(prepared_scratch(spec, specs, writes)?),
                None => None,
            };
            program.scratch = scratch.as_ref().map(|s| s.path().to_path_buf());
            let recorded_with = program.describe();
            let seconds = spec.timeout().as_secs_f64();
            return Ok(match program.call(args)? {
                CommandAnswer::Exited {
                    code: 0, stdout, ..
                } => {
                    let (body, printed) = Fixture::answer_from_text(&stdout);
                    LiveAnswer {
                        status: 200,
                        body,
                        printed,
                        note: None,
                        recorded_with,
                        tool_answered: true,
                    }
                }
                // A failing program's own words are its answer.
                CommandAnswer::Exited {
                    code,
                    stdout,
                    stderr,
                } => LiveAnswer {
                    tool_answered: true,
                    ..failed(stdout, stderr, format!("exit code {code}"), recorded_with)
                },
                // Not the tool's own answer, though recorded where the key has none.
                CommandAnswer::Killed {
                    signal,
                    stdout,
                    stderr,
                } => LiveAnswer {
                    tool_answered: false,
                    ..failed(
                        stdout,
                        stderr,
                        format!("killed by signal {signal}"),
                        recorded_with,
                    )
                },
                CommandAnswer::TimedOut => LiveAnswer {
                    status: 504,
                    body: Value::String(format!("The tool did not answer within {seconds} s.")),
                    printed: None,
                    note: Some(format!("timed out after {seconds} s")),
                    recorded_with,
                    tool_answered: false,
                },
            });
        }
        if let Some(server) = spec.mcp_server() {
            let started = self.mcp_started(&server)?;
            if let Some(drift) = schema_drift(spec, &started.listed) {
                eprintln!("skilleval: warning: {}: {drift}", server.describe());
            }
            let answer = started.connection.call(spec.mcp_name(), args)?;
            let (body, printed) = Fixture::answer_from_text(&answer.text);
            return Ok(LiveAnswer {
                status: if answer.is_error { 500 } else { 200 },
                body,
                printed,
                note: answer
                    .is_error
                    .then(|| "the server answered isError".to_string()),
                recorded_with: format!("{} (tools/call {})", server.describe(), spec.mcp_name()),
                tool_answered: true,
            });
        }
        match spec.kind.as_str() {
            k if k == weather::TOOL_NAME => {
                let service = self
                    .weather
                    .clone()
                    .unwrap_or_else(|| Arc::new(weather::WeatherService::new()));
                let location = args
                    .get("location")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim();
                let fetched = service.fetch(location).map_err(|e| anyhow!("{e}"))?;
                Ok(LiveAnswer {
                    status: fetched.status,
                    body: Fixture::body_from_text(&fetched.body),
                    // The typed tool renders its own text from the body's values.
                    printed: None,
                    note: None,
                    recorded_with: format!("{} service", weather::TOOL_NAME),
                    tool_answered: true,
                })
            }
            other => bail!("tool kind {other:?} has no live service to record from"),
        }
    }

    /// The server, started (and its tools listed) at the first call that needs it.
    fn mcp_started(&self, server: &McpServerSpec) -> anyhow::Result<McpStarted> {
        let mut started = self.mcp.lock().expect("mcp lock");
        if let Some(found) = started.get(server) {
            return Ok(found.clone());
        }
        let connection = Arc::new(McpConnection::start(server)?);
        let listed = connection.list_tools()?;
        let entry = McpStarted { connection, listed };
        started.insert(server.clone(), entry.clone());
        Ok(entry)
    }
}

/// Before a recording run's model loads: each MCP server a pack reaches by URL answers
/// initialize and lists the tools the pack asks of it. Such a server runs on its own, so an
/// unreachable or wrong URL is the pack's error, named at its field, not a failure at the first
/// call. A server the pack starts (stdio) is started at its first call, as before.
pub fn check_http_mcp_servers(pack: &Pack, mode: RecordMode) -> anyhow::Result<()> {
    if mode == RecordMode::Off {
        return Ok(());
    }
    let live = LiveServices::default();
    for spec in pack.tools.iter().filter(|t| t.url.is_some()) {
        let Some(server) = spec.mcp_server() else {
            continue;
        };
        let at = spec
            .declared_at
            .clone()
            .unwrap_or_else(|| format!("{}: field `tools[{}]", pack.file.display(), spec.name));
        let started = live
            .mcp_started(&server)
            .map_err(|e| anyhow!("{at}.url`: {e}"))?;
        if let Some(drift) = schema_drift(spec, &started.listed) {
            if !started.listed.iter().any(|t| t.name == spec.mcp_name()) {
                let field = if spec.mcp_tool.is_some() {
                    "mcp_tool"
                } else {
                    "name"
                };
                bail!("{at}.{field}`: the server ({}) {drift}", server.describe());
            }
        }
    }
    Ok(())
}

/// A scratch folder holding `spec`'s world after `writes`, each run by its own tool's program.
fn prepared_scratch(
    spec: &ToolSpec,
    specs: &[ToolSpec],
    writes: &[PriorWrite],
) -> anyhow::Result<crate::tools::scratch::Scratch> {
    let scratch = crate::tools::scratch::Scratch::new(spec.world.as_deref())?;
    for write in writes {
        let Some(mut program) = specs
            .iter()
            .find(|s| s.name == write.tool)
            .and_then(|s| s.program_for(&write.arguments))
        else {
            bail!(
                "the earlier write {} cannot be run again to reach this call's state: it is not a command tool",
                write.tool
            );
        };
        program.scratch = Some(scratch.path().to_path_buf());
        program.call(&write.arguments)?;
    }
    Ok(scratch)
}

/// How the server's own listing of a tool differs from what the pack offers the model, if it
/// does: the recordings would then answer a tool the model never sees.
fn schema_drift(spec: &ToolSpec, listed: &[ListedTool]) -> Option<String> {
    let name = spec.mcp_name();
    let Some(tool) = listed.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
        return Some(format!(
            "lists no tool {name:?} (it lists: {})",
            names.join(", ")
        ));
    };
    if spec.parameters.as_ref() != Some(&tool.input_schema) {
        return Some(format!(
            "tool {name:?}: the server's input schema differs from the pack's `parameters`"
        ));
    }
    None
}

/// The fixtures of a pack's tools, every file loaded and checked: a missing folder is an error
/// unless the run records into it, and a typed tool's recording must be a body the tool can
/// read. Runs call it before the model loads.
pub fn load_fixtures(pack: &Pack, mode: RecordMode) -> anyhow::Result<FixtureStore> {
    // A recording run with nothing to ask would replay and exit 0 as if it had recorded.
    if mode != RecordMode::Off && !pack.tools.iter().any(ToolSpec::can_record) {
        let kinds: Vec<String> = pack
            .tools
            .iter()
            .map(|t| format!("{} ({})", t.name, t.kind))
            .collect();
        bail!(
            "{}: --record: no tool of pack {} can be asked live: {}; a recorded tool is answered from its fixtures only (give it `kind = \"command\"` or `kind = \"mcp\"` to record from the real program)",
            pack.file.display(),
            pack.name,
            if kinds.is_empty() { "it has no tools".to_string() } else { kinds.join(", ") }
        );
    }
    if mode != RecordMode::Off {
        for route in pack.routes() {
            super::pack::source::refuse_write_into_shipped(&route.dir, "--record")?;
        }
    }
    let store = match mode {
        RecordMode::Off => FixtureStore::load(pack.routes())?,
        RecordMode::Gaps | RecordMode::All => FixtureStore::load_to_record(pack.routes())?,
    };
    for (file, fixture) in store.entries() {
        // Only a write changes the state a recording was made in.
        for (i, write) in fixture.after.iter().enumerate() {
            let writes = pack
                .tools
                .iter()
                .any(|t| t.name == write.tool && t.effect == Effect::Write);
            if !writes {
                bail!(
                    "{}: field `after[{i}].tool`: {:?} is no tool of pack {} with `effect = \"write\"`; only a write changes the state a recording was made in",
                    file.display(),
                    write.tool,
                    pack.name
                );
            }
        }
        let kind = pack.tools.iter().find(|t| t.name == fixture.tool);
        // A stub answers nothing, so its empty body is not held to the tool's shape.
        if !fixture.stub && kind.is_some_and(|t| t.kind == weather::TOOL_NAME) {
            weather::check_recorded(fixture.status, &fixture.body_text())
                .map_err(|e| anyhow!("{}: field `body`: {e}", file.display()))?;
        }
    }
    Ok(store)
}

/// A failed program's answer (status 500): its own words, stderr, or stdout if it said nothing
/// there.
fn failed(stdout: String, stderr: String, note: String, recorded_with: String) -> LiveAnswer {
    let words = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    LiveAnswer {
        status: 500,
        body: Value::String(words.trim().to_string()),
        printed: None,
        note: Some(note),
        recorded_with,
        tool_answered: true,
    }
}

/// Adds where an answer came from to what the tool said about it (a weather report's
/// `outcome` and `verification`, say), keeping both.
fn add_meta(mut out: ToolOutput, extra: Value) -> ToolOutput {
    let Value::Object(extra) = extra else {
        return out;
    };
    match &mut out.meta {
        Value::Object(meta) => meta.extend(extra),
        _ => out.meta = Value::Object(extra),
    }
    out
}

/// What the model sees for a recorded answer.
fn render_recorded(spec: &ToolSpec, args: &Map<String, Value>, fixture: &Fixture) -> ToolOutput {
    if spec.kind == weather::TOOL_NAME {
        let location = args
            .get("location")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        return weather::render_result(location, fixture.status, &fixture.body_text());
    }
    if (200..300).contains(&fixture.status) {
        ToolOutput::ok(fixture.body_text())
    } else {
        ToolOutput::error(fixture.body_text())
    }
}

/// A call answered in a pack whose tools have state: every tool of the pack, and the writes
/// that ran before the call.
type World<'a> = Option<(&'a [ToolSpec], &'a [PriorWrite])>;

fn answer(
    spec: &ToolSpec,
    store: &FixtureStore,
    mode: RecordMode,
    live: &LiveServices,
    args: &Map<String, Value>,
    world: World,
) -> ToolOutput {
    let after: &[PriorWrite] = world.map(|(_, writes)| writes).unwrap_or_default();
    // A computed tool works out every answer itself: nothing to look up, so never a gap.
    if let Some(computed) = crate::tools::computed(&spec.kind) {
        return (computed.answer)(args).with_meta(json!({"computed": true}));
    }
    // Arguments the typed tool refuses are refused here too, as the live tool would, with no
    // lookup: the model's mistake is judged, not hidden as a gap, and never sent to a service.
    if spec.kind == weather::TOOL_NAME {
        if let Err(refusal) = weather::location_argument(args) {
            return refusal;
        }
    }
    let recorded = store.lookup_after(&spec.name, args, after);
    let must_fetch = match mode {
        RecordMode::Off => false,
        RecordMode::Gaps => recorded.is_none(),
        RecordMode::All => true,
    };
    if must_fetch && spec.can_record() {
        return match live.fetch(spec, args, world) {
            Ok(answer) => {
                let fixture = Fixture {
                    tool: spec.name.clone(),
                    arguments: args.clone(),
                    recorded_from_live: true,
                    note: answer.note,
                    recorded_with: Some(answer.recorded_with),
                    recorded_at: Some(crate::exec::run_id::utc_timestamp()),
                    stub: false,
                    status: answer.status,
                    body: answer.body,
                    printed: answer.printed,
                    after: after.to_vec(),
                };
                let out = render_recorded(spec, args, &fixture);
                let (status, note) = (fixture.status, fixture.note.clone());
                let recorded = match answer.tool_answered {
                    true => store.record(fixture),
                    false => store.record_no_answer(fixture),
                };
                match recorded {
                    Ok(Recorded::Written(path)) => {
                        add_meta(out, json!({"recorded": path.display().to_string()}))
                    }
                    // The live tool failed where a good answer is on file, or gave no answer
                    // of its own where any is: the file's stays, and the unit is an error that
                    // says why.
                    Ok(Recorded::Kept { path, kept }) => {
                        let why = format!(
                            "the live tool failed (status {status}{}), so the recording {} (status {}) was kept, not replaced",
                            note.map(|n| format!(", {n}")).unwrap_or_default(),
                            path.display(),
                            kept.status
                        );
                        eprintln!("skilleval: warning: {}: {why}", spec.name);
                        add_meta(
                            out,
                            json!({"fixture": path.display().to_string(), "record_error": why}),
                        )
                    }
                    // A call earlier in this run recorded the key (its arguments fold to the
                    // same): its recording stands. The same answer again is that recording; a
                    // different one is this call's answer, and said, never written over it.
                    Ok(Recorded::EarlierInRun { path, same: true }) => {
                        add_meta(out, json!({"recorded": path.display().to_string()}))
                    }
                    Ok(Recorded::EarlierInRun { path, same: false }) => {
                        let why = format!(
                            "a call earlier in this run with arguments that fold to the same key got another answer; its recording {} stands, and this call's answer (status {status}) is not kept",
                            path.display()
                        );
                        eprintln!(
                            "skilleval: warning: {} {}: {why}",
                            spec.name,
                            Value::Object(args.clone())
                        );
                        add_meta(
                            out,
                            json!({"fixture": path.display().to_string(), "record_warning": why}),
                        )
                    }
                    Err(e) => add_meta(out, json!({"record_error": e.to_string()})),
                }
            }
            // A failed recording leaves the old answer in place, or tells the model the
            // service failed; either way the unit is an error (`recording_failure`).
            Err(e) => match recorded {
                Some((path, fixture)) => add_meta(
                    render_recorded(spec, args, &fixture),
                    json!({"fixture": path.display().to_string(), "record_error": e.to_string()}),
                ),
                None => ToolOutput::error(format!("The service could not be reached: {e}."))
                    .with_meta(json!({"record_error": e.to_string()})),
            },
        };
    }
    match recorded {
        Some((path, fixture)) => add_meta(
            render_recorded(spec, args, &fixture),
            json!({"fixture": path.display().to_string()}),
        ),
        None => match &spec.unrecorded {
            Some(answer) => {
                ToolOutput::error(answer.clone()).with_meta(json!({"unrecorded": true}))
            }
            None if after.is_empty() => {
                ToolOutput::error(gap_message(&spec.name, args)).with_meta(json!({"gap": true}))
            }
            None => ToolOutput::error(gap_message(&spec.name, args))
                .with_meta(json!({"gap": true, "after": after})),
        },
    }
}

/// Why the first failed recording of a transcript failed, if one did: such a unit is an error,
/// not a gap, so that a recording run without a network cannot pass as a quiet one.
pub fn recording_failure(transcript: &Transcript) -> Option<String> {
    transcript.calls().find_map(|call| {
        call.meta
            .get("record_error")
            .and_then(Value::as_str)
            .map(str::to_string)
    })
}

/// A recording run in which recordings were tried and none succeeded is an error that gives the
/// first failure's reason; some failures among successes are counted in the report instead.
pub fn check_recordings(entries: &[JournalEntry]) -> anyhow::Result<()> {
    let calls = || entries.iter().flat_map(|e| e.transcript.calls());
    let recorded = calls().filter(|c| c.meta.get("recorded").is_some()).count();
    let failed: Vec<String> = entries
        .iter()
        .filter_map(|e| recording_failure(&e.transcript))
        .collect();
    match failed.first() {
        Some(first) if recorded == 0 => bail!(
            "--record: all {} recording(s) failed, no new answer was recorded; the first: {first}",
            calls()
                .filter(|c| c.meta.get("record_error").is_some())
                .count()
        ),
        _ => Ok(()),
    }
}

/// The registry a pack's samples run with: every tool answered through the fixture store.
pub fn build_registry(
    tools: &[ToolSpec],
    store: Arc<FixtureStore>,
    mode: RecordMode,
    live: LiveServices,
) -> Registry {
    // The registry's own servers: they stop when the run's registry is dropped, whoever else
    // holds the options.
    let live = LiveServices {
        weather: live.weather,
        ..Default::default()
    };
    let mut registry = Registry::new();
    // One write makes the pack's world stateful: every call is then answered in the state the
    // conversation's writes left.
    let stateful = tools.iter().any(|t| t.effect == Effect::Write);
    let specs: Arc<Vec<ToolSpec>> = Arc::new(tools.to_vec());
    for spec in tools {
        let (description, parameters, gate) = if spec.kind == weather::TOOL_NAME {
            let def = weather::tool_def(Arc::new(weather::WeatherService::new()));
            (def.description, def.parameters, def.skill_gate)
        } else if let Some(computed) = crate::tools::computed(&spec.kind) {
            (computed.description.to_string(), computed.parameters, None)
        } else {
            (
                spec.description.clone().unwrap_or_default(),
                spec.parameters.clone().unwrap_or(json!({"type": "object"})),
                None,
            )
        };
        let gate = spec.skill_gate.clone().or(gate);
        let owned = spec.clone();
        let store = store.clone();
        let live = live.clone();
        let mut def = if stateful {
            let specs = specs.clone();
            ToolDef::new(
                spec.name.clone(),
                description,
                parameters,
                spec.effect,
                |_| ToolOutput::error("a tool with state is called with its conversation's writes"),
            )
            .with_state(move |args, writes| {
                answer(&owned, &store, mode, &live, args, Some((&specs, writes)))
            })
        } else {
            ToolDef::new(
                spec.name.clone(),
                description,
                parameters,
                spec.effect,
                move |args| answer(&owned, &store, mode, &live, args, None),
            )
        };
        def.skill_gate = gate;
        if spec.defer {
            def.deferred = Some(spec.group.clone().unwrap_or_default());
        }
        registry.add(def);
    }
    registry
}
