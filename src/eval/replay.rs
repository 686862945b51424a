//! Turns a pack's tools into harness tools answered from fixtures, or from the live service
//! when recording.

use std::sync::Arc;

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::fixtures::{gap_message, Fixture, FixtureStore};
use super::pack::ToolSpec;
use crate::harness::tools::{Effect, Registry, ToolDef, ToolOutput};
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

/// How a live service is reached while recording; tests point it at a loopback server.
#[derive(Clone, Default)]
pub struct LiveServices {
    pub weather: Option<Arc<weather::WeatherService>>,
}

impl LiveServices {
    fn fetch(&self, kind: &str, args: &Map<String, Value>) -> anyhow::Result<(u16, Value)> {
        match kind {
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
                Ok((fetched.status, Fixture::body_from_text(&fetched.body)))
            }
            other => bail!("tool kind {other:?} has no live service to record from"),
        }
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

fn answer(
    spec: &ToolSpec,
    store: &FixtureStore,
    mode: RecordMode,
    live: &LiveServices,
    args: &Map<String, Value>,
) -> ToolOutput {
    // Arguments the typed tool refuses are refused here too, as the live tool would, with no
    // lookup: the model's mistake is judged, not hidden as a gap, and never sent to a service.
    if spec.kind == weather::TOOL_NAME {
        if let Err(refusal) = weather::location_argument(args) {
            return refusal;
        }
    }
    let recorded = store.lookup(&spec.name, args);
    let must_fetch = match mode {
        RecordMode::Off => false,
        RecordMode::Gaps => recorded.is_none(),
        RecordMode::All => true,
    };
    if must_fetch && spec.kind != "recorded" {
        return match live.fetch(&spec.kind, args) {
            Ok((status, body)) => {
                let fixture = Fixture {
                    tool: spec.name.clone(),
                    arguments: args.clone(),
                    recorded_from_live: true,
                    note: None,
                    status,
                    body,
                };
                let out = render_recorded(spec, args, &fixture);
                match store.record(fixture) {
                    Ok(path) => add_meta(out, json!({"recorded": path.display().to_string()})),
                    Err(e) => add_meta(out, json!({"record_error": e.to_string()})),
                }
            }
            // A failed recording leaves the old answer in place, or a gap.
            Err(e) => match recorded {
                Some((path, fixture)) => add_meta(
                    render_recorded(spec, args, &fixture),
                    json!({"fixture": path.display().to_string(), "record_error": e.to_string()}),
                ),
                None => ToolOutput::error(gap_message(&spec.name, args))
                    .with_meta(json!({"gap": true, "record_error": e.to_string()})),
            },
        };
    }
    match recorded {
        Some((path, fixture)) => add_meta(
            render_recorded(spec, args, &fixture),
            json!({"fixture": path.display().to_string()}),
        ),
        None => ToolOutput::error(gap_message(&spec.name, args)).with_meta(json!({"gap": true})),
    }
}

/// The registry a pack's samples run with: every tool answered through the fixture store.
pub fn build_registry(
    tools: &[ToolSpec],
    store: Arc<FixtureStore>,
    mode: RecordMode,
    live: LiveServices,
) -> Registry {
    let mut registry = Registry::new();
    for spec in tools {
        let (description, parameters, gate) = if spec.kind == weather::TOOL_NAME {
            let def = weather::tool_def(Arc::new(weather::WeatherService::new()));
            (def.description, def.parameters, def.skill_gate)
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
        let mut def = ToolDef::new(
            spec.name.clone(),
            description,
            parameters,
            Effect::Read,
            move |args| answer(&owned, &store, mode, &live, args),
        );
        def.skill_gate = gate;
        registry.add(def);
    }
    registry
}
