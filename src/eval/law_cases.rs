//! `skilleval check`: a pack's laws against a person's verdicts, and proof that every corpus
//! sample can pass.
//!
//! A pack may keep `judge-cases.jsonl` beside its `pack.toml`: one case a line, a reply with
//! the calls made before it and a person's verdict for each law that applies:
//!
//! ```json
//! {"id": "case-001", "prompt_id": "plain-001",
//!  "calls": [{"tool": "weather_lookup", "arguments": {"location": "Madrid"}}],
//!  "reply": "In Madrid it is 22°C.", "stop": "answered",
//!  "verdicts": {"calls-weather-lookup": true, "answers": true}, "source": "hand"}
//! ```
//!
//! Each call is answered as in a run, through the pack's fixture store (a call with no
//! recording is a gap), unless it gives its `result` verbatim. The case is judged with the
//! pack's laws and every law where the judge and the person differ is a disagreement.
//!
//! Every sample of the pack's corpus must also have a reply that passes every law that
//! applies to it: a case for it whose verdicts are all true, or a reference reply built from
//! the laws and fixtures (the call the pack's `argument_equals_field` law asks for and a reply
//! that names the sample's place and restates the result; "I could not find X."; or, with no
//! call, a plain answer). A sample none of these pass is listed: no reply could pass it.

use anyhow::{anyhow, bail, Context as _};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::corpus::Sample;
use super::judge::{self, Check};
use super::pack::Pack;
use super::replay::RecordMode;
pub use super::replayer::{CaseCall, CaseTurn, Replayer};
use crate::harness::transcript::StopReason;

/// The cases file's name, in the pack's folder.
pub const CASES_FILE: &str = "judge-cases.jsonl";

/// The field of a conversation sample that gives a whole reference conversation: each turn's
/// calls and reply, the last turn's reply the answer (`[{"calls": […], "reply": …}, …]`).
pub const TURNS_FIELD: &str = "reference_turns";

/// The sample's own reference conversation, when it gives one; each call one the model could
/// make (`Pack::check_written_call`).
pub fn reference_turns(pack: &Pack, sample: &Sample) -> anyhow::Result<Option<Vec<CaseTurn>>> {
    let Some(value) = sample.fields.get(TURNS_FIELD).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let turns: Vec<CaseTurn> = serde_json::from_value(value.clone()).map_err(|e| {
        anyhow!(
            "sample {:?} (line {}): field `{TURNS_FIELD}`: {e}",
            sample.id,
            sample.line
        )
    })?;
    if turns.is_empty() {
        bail!(
            "sample {:?} (line {}): field `{TURNS_FIELD}` is empty",
            sample.id,
            sample.line
        );
    }
    for (i, turn) in turns.iter().enumerate() {
        for (j, call) in turn.calls.iter().enumerate() {
            pack.check_written_call(&call.tool, &call.arguments)
                .map_err(|e| {
                    anyhow!(
                        "sample {:?} (line {}): field `{TURNS_FIELD}[{i}].calls[{j}]`: {e}",
                        sample.id,
                        sample.line
                    )
                })?;
        }
    }
    Ok(Some(turns))
}

/// A sample's `reference_turns` as a run could take them: each call one the model could make
/// (checked as they are read), and each earlier turn a question the sample's scripted user
/// answers.
fn check_reference_turns(pack: &Pack, replayer: &Replayer, sample: &Sample) -> anyhow::Result<()> {
    let Some(turns) = reference_turns(pack, sample)
        .map_err(|e| anyhow!("{}: {e}", pack.corpus_path.display()))?
    else {
        return Ok(());
    };
    let at = format!(
        "{}:{}: field `{TURNS_FIELD}`",
        pack.corpus_path.display(),
        sample.line
    );
    if turns.len() > 1 && sample.user.is_none() {
        bail!(
            "{at}: {} turns, but the sample has no `user` to answer the earlier ones",
            turns.len()
        );
    }
    let (last, earlier) = turns.split_last().expect("not empty");
    replayer
        .conversation(
            sample.user.as_ref(),
            earlier,
            &last.calls,
            &last.reply,
            StopReason::Answered,
        )
        .map(drop)
        .map_err(|e| anyhow!("{at}: {e}"))
}

/// One hand-labelled reply.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub id: String,
    pub prompt_id: String,
    /// The conversation's earlier turns, each answered by the sample's scripted user.
    #[serde(default)]
    pub turns: Vec<CaseTurn>,
    #[serde(default)]
    pub calls: Vec<CaseCall>,
    pub reply: String,
    /// `answered` (the default), `round_budget`, `token_budget` or `error`.
    #[serde(default)]
    pub stop: Option<String>,
    pub verdicts: BTreeMap<String, bool>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    /// The line of the cases file, 1-based.
    #[serde(skip)]
    pub line: usize,
}

impl Case {
    fn stop_reason(&self) -> Option<StopReason> {
        match self.stop.as_deref().unwrap_or("answered") {
            "answered" => Some(StopReason::Answered),
            "round_budget" => Some(StopReason::RoundBudget),
            "token_budget" => Some(StopReason::TokenBudget),
            "error" => Some(StopReason::Error("the case says the run failed".into())),
            _ => None,
        }
    }
}

/// Reads a cases file, checking every line against the pack and its corpus. The first
/// problem is an error naming the file, the line and the field.
pub fn load_cases(path: &Path, pack: &Pack, samples: &[Sample]) -> anyhow::Result<Vec<Case>> {
    let bytes = crate::base::input::read_input(path)
        .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
    let text = crate::base::input::utf8_text(bytes).map_err(|e| anyhow!(e.at(path)))?;
    let by_id: BTreeMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut cases: Vec<Case> = Vec::new();
    let mut ids = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        let mut case: Case =
            serde_json::from_str(line).map_err(|e| anyhow!("{at}: not a case: {e}"))?;
        case.line = index + 1;
        if !ids.insert(case.id.clone()) {
            bail!("{at}: field `id`: {:?} is used twice", case.id);
        }
        let Some(sample) = by_id.get(case.prompt_id.as_str()) else {
            bail!(
                "{at}: field `prompt_id`: no sample {:?} in {}",
                case.prompt_id,
                pack.corpus_path.display()
            );
        };
        if !case.turns.is_empty() && sample.user.is_none() {
            bail!(
                "{at}: field `turns`: sample {:?} has no `user`, so nobody answers an earlier turn",
                sample.id
            );
        }
        if case.stop_reason().is_none() {
            bail!(
                "{at}: field `stop`: {:?} is not answered, round_budget, token_budget or error",
                case.stop.as_deref().unwrap_or_default()
            );
        }
        // A call to a tool the pack lacks is kept: small models do make them, and a run
        // answers them with an error, as the replay below does.
        for call in &case.calls {
            if call.tool.trim().is_empty() {
                bail!("{at}: field `calls`: a call with an empty tool name");
            }
        }
        for law_name in case.verdicts.keys() {
            let Some(law) = pack.laws.iter().find(|l| &l.name == law_name) else {
                bail!(
                    "{at}: field `verdicts`: no law `{law_name}` in {}",
                    pack.file.display()
                );
            };
            if !judge::applies(law, &sample.category, &sample.fields) {
                bail!(
                    "{at}: field `verdicts`: law `{law_name}` does not apply to sample {:?} (category {})",
                    sample.id,
                    sample.category
                );
            }
        }
        cases.push(case);
    }
    Ok(cases)
}

/// One line for each case call to a tool the pack does not offer, naming the file, the line
/// and the field. Such a case is kept (small models do call tools that do not exist, and a run
/// answers them with an error), but a misspelt tool name must not pass unseen.
fn unoffered_tool_notes(pack: &Pack, path: &Path, cases: &[Case]) -> Vec<String> {
    let offered = |tool: &str| {
        pack.tools.iter().any(|t| t.name == tool)
            || crate::harness::builtins::schema_of(tool).is_some()
    };
    let mut notes = Vec::new();
    for case in cases {
        let earlier = case.turns.iter().enumerate().flat_map(|(i, turn)| {
            turn.calls
                .iter()
                .enumerate()
                .map(move |(j, call)| (format!("turns[{i}].calls[{j}].tool"), call))
        });
        let last =
            (case.calls.iter().enumerate()).map(|(j, call)| (format!("calls[{j}].tool"), call));
        for (field, call) in earlier.chain(last) {
            if !offered(&call.tool) {
                notes.push(format!(
                    "{}:{}: field `{field}`: {:?} is no tool of the pack; the case is judged as a run answers such a call, with an error",
                    path.display(),
                    case.line,
                    call.tool
                ));
            }
        }
    }
    notes
}

/// A law where the person and the judge differ on a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    pub case_id: String,
    pub prompt_id: String,
    pub law: String,
    pub person: bool,
    pub judge: bool,
}

/// How many cases a person says a law holds in, and fails in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    pub law: String,
    pub holds: usize,
    pub fails: usize,
}

/// A sample no reference reply passes, with the laws its closest reply failed, and what a
/// reader needs to see why: that reply, the results it was answered from, and each failed
/// law as the pack writes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unpassable {
    pub sample_id: String,
    pub failed: Vec<String>,
    pub reply: String,
    /// Each call of the closest reply and the result the model was shown for it.
    pub results: Vec<(String, String)>,
    /// Each failed law's check as written (its kind and fields, as JSON).
    pub checks: Vec<(String, String)>,
    /// Each failed law's cause on the closest reply, in words (`judge::why_failed`).
    pub reasons: Vec<(String, String)>,
}

/// A result or reply cut for one line of `check`'s report.
fn shown(text: &str) -> String {
    const MOST: usize = 240;
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MOST) {
        Some((end, _)) => format!("{:?}…", &one_line[..end]),
        None => format!("{one_line:?}"),
    }
}

#[derive(Debug, Clone)]
pub struct CheckReport {
    pub pack: String,
    /// Lines a reader should see before the findings, e.g. a case calling a tool the pack
    /// does not offer.
    pub notes: Vec<String>,
    /// The cases file, when the pack has one.
    pub cases_file: Option<PathBuf>,
    pub cases: usize,
    pub disagreements: Vec<Disagreement>,
    /// One entry per law of the pack, in law order; all zero without a cases file.
    pub coverage: Vec<Coverage>,
    pub samples: usize,
    pub unpassable: Vec<Unpassable>,
}

impl CheckReport {
    /// Laws that a person never saw hold, or never saw fail (only with a cases file).
    pub fn uncovered(&self) -> Vec<&Coverage> {
        if self.cases_file.is_none() {
            return Vec::new();
        }
        self.coverage
            .iter()
            .filter(|c| c.holds == 0 || c.fails == 0)
            .collect()
    }

    /// Whether the laws judge as the person did, every law is covered both ways, and every
    /// sample can pass.
    pub fn agrees(&self) -> bool {
        self.disagreements.is_empty() && self.unpassable.is_empty() && self.uncovered().is_empty()
    }

    /// One line per finding, then a summary line.
    pub fn render(&self) -> String {
        let verdict = |holds: bool| if holds { "holds" } else { "fails" };
        let mut out = String::new();
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        match &self.cases_file {
            Some(path) => out.push_str(&format!("cases: {} from {}\n", self.cases, path.display())),
            None => out.push_str(&format!(
                "cases: the pack has no {CASES_FILE}; only reference replies are checked\n"
            )),
        }
        for d in &self.disagreements {
            out.push_str(&format!(
                "disagreement: case {} (prompt {}) law {}: person says it {}, the law says it {}\n",
                d.case_id,
                d.prompt_id,
                d.law,
                verdict(d.person),
                verdict(d.judge)
            ));
        }
        if self.cases_file.is_some() {
            for c in &self.coverage {
                let missing = match (c.holds, c.fails) {
                    (0, 0) => " (no case)",
                    (0, _) => " (no case where it holds)",
                    (_, 0) => " (no case where it fails)",
                    _ => "",
                };
                out.push_str(&format!(
                    "coverage: {}: holds in {}, fails in {}{missing}\n",
                    c.law, c.holds, c.fails
                ));
            }
        }
        for u in &self.unpassable {
            out.push_str(&format!(
                "unpassable: sample {}: no reference reply passes (closest fails {})\n",
                u.sample_id,
                u.failed.join(", ")
            ));
            for (tool, result) in &u.results {
                out.push_str(&format!("  result of {tool}: {}\n", shown(result)));
            }
            out.push_str(&format!("  closest reply: {}\n", shown(&u.reply)));
            for (law, why) in &u.reasons {
                out.push_str(&format!("  law {law} fails: {why}\n"));
            }
            for (law, check) in &u.checks {
                out.push_str(&format!("  law {law} as written: {check}\n"));
            }
        }
        if !self.unpassable.is_empty() {
            out.push_str("hint: a reference reply restates its call's recording; where none answers the call, `skilleval check --record` asks the pack's live tools for it\n");
        }
        out.push_str(&format!(
            "pack {}: {} disagreement(s) over {} case(s), {} law(s) lacking a case, {} of {} sample(s) with no passing reply: {}\n",
            self.pack,
            self.disagreements.len(),
            self.cases,
            self.uncovered().len(),
            self.unpassable.len(),
            self.samples,
            if self.agrees() { "agree" } else { "disagree" }
        ));
        out
    }
}

/// Checks a pack: its cases (when it has a cases file) and a passing reply for every sample.
pub fn check(pack: &Pack) -> anyhow::Result<CheckReport> {
    check_recording(pack, RecordMode::Off)
}

/// [`check`], asking the live tools for the reference calls and case calls no recording
/// answers when `mode` records, so that a sample is not unpassable for want of a recording.
pub fn check_recording(pack: &Pack, mode: RecordMode) -> anyhow::Result<CheckReport> {
    let samples = pack.corpus(None)?;
    let cases_path = pack.dir.join(CASES_FILE);
    let present = crate::base::input::optional_input_present(&cases_path)
        .with_context(|| format!("{}: cannot read judge cases", cases_path.display()))?;
    let cases_file = present.then_some(cases_path);
    let cases = match &cases_file {
        Some(path) => load_cases(path, pack, &samples)?,
        None => Vec::new(),
    };
    let notes = match &cases_file {
        Some(path) => unoffered_tool_notes(pack, path, &cases),
        None => Vec::new(),
    };
    let replayer = Replayer::recording(pack, mode)?;
    for sample in &samples {
        check_reference_turns(pack, &replayer, sample)?;
    }
    let by_id: BTreeMap<&str, &Sample> = samples.iter().map(|s| (s.id.as_str(), s)).collect();

    let mut disagreements = Vec::new();
    let mut coverage: Vec<Coverage> = pack
        .laws
        .iter()
        .map(|law| Coverage {
            law: law.name.clone(),
            holds: 0,
            fails: 0,
        })
        .collect();
    for case in &cases {
        let sample = by_id[case.prompt_id.as_str()];
        let transcript = replayer
            .conversation(
                sample.user.as_ref(),
                &case.turns,
                &case.calls,
                &case.reply,
                case.stop_reason().expect("checked on load"),
            )
            .map_err(|e| {
                let file = cases_file.as_deref().unwrap_or(Path::new(CASES_FILE));
                anyhow!("{}:{}: field `turns`: {e}", file.display(), case.line)
            })?;
        let judgement = judge::judge_sample(&pack.laws, sample, &transcript);
        for (law, person) in &case.verdicts {
            let holds = !judgement.failed.contains(law);
            if holds != *person {
                disagreements.push(Disagreement {
                    case_id: case.id.clone(),
                    prompt_id: case.prompt_id.clone(),
                    law: law.clone(),
                    person: *person,
                    judge: holds,
                });
            }
            if let Some(c) = coverage.iter_mut().find(|c| &c.law == law) {
                if *person {
                    c.holds += 1;
                } else {
                    c.fails += 1;
                }
            }
        }
    }

    let unpassable = samples
        .iter()
        .filter_map(|sample| {
            let own: Vec<&Case> = cases
                .iter()
                .filter(|c| c.prompt_id == sample.id && c.verdicts.values().all(|v| *v))
                .collect();
            passes_somehow(pack, &replayer, sample, &own)
                .err()
                .map(|mut closest| {
                    closest.sample_id = sample.id.clone();
                    closest.checks = closest
                        .failed
                        .iter()
                        .filter_map(|name| pack.laws.iter().find(|l| &l.name == name))
                        .map(|law| {
                            // The fields the law sets: an unset optional one says nothing.
                            let mut check = serde_json::to_value(law.check()).unwrap_or_default();
                            if let Some(fields) = check.as_object_mut() {
                                fields.retain(|_, v| !v.is_null());
                            }
                            let check = check.to_string();
                            (law.name.clone(), check)
                        })
                        .collect();
                    *closest
                })
        })
        .collect();

    Ok(CheckReport {
        pack: pack.name.clone(),
        notes,
        cases: cases.len(),
        cases_file,
        disagreements,
        coverage,
        samples: samples.len(),
        unpassable,
    })
}

/// A reply to try on a sample: the calls before it and its text.
struct Reference {
    calls: Vec<CaseCall>,
    reply: String,
}

/// `Ok` when some reference reply passes every law that applies to the sample, else the
/// reply that came closest: its failed laws, its text and the results it was answered from.
fn passes_somehow(
    pack: &Pack,
    replayer: &Replayer,
    sample: &Sample,
    own_cases: &[&Case],
) -> Result<(), Box<Unpassable>> {
    type Reference = (Vec<CaseTurn>, Vec<CaseCall>, String, StopReason);
    let mut references: Vec<Reference> = own_cases
        .iter()
        .map(|c| {
            (
                c.turns.clone(),
                c.calls.clone(),
                c.reply.clone(),
                c.stop_reason().expect("checked on load"),
            )
        })
        .collect();
    // The sample's own reference conversation (each one read without error before).
    if let Ok(Some(mut turns)) = reference_turns(pack, sample) {
        let last = turns.pop().expect("not empty");
        references.push((turns, last.calls, last.reply, StopReason::Answered));
    }
    references.extend(
        built_references(pack, replayer, sample)
            .into_iter()
            .map(|r| (Vec::new(), r.calls, r.reply, StopReason::Answered)),
    );
    let mut closest: Option<Unpassable> = None;
    for (turns, calls, reply, stop) in references {
        let Ok(transcript) =
            replayer.conversation(sample.user.as_ref(), &turns, &calls, &reply, stop)
        else {
            continue;
        };
        let judgement = judge::judge_sample(&pack.laws, sample, &transcript);
        if judgement.passed {
            return Ok(());
        }
        if closest
            .as_ref()
            .is_none_or(|c| judgement.failed.len() < c.failed.len())
        {
            let reasons = judgement
                .failed
                .iter()
                .filter_map(|name| pack.laws.iter().find(|l| &l.name == name))
                .map(|law| {
                    let why = judge::why_failed(law, &sample.fields, &transcript);
                    (law.name.clone(), why)
                })
                .collect();
            closest = Some(Unpassable {
                failed: judgement.failed,
                reasons,
                results: transcript
                    .calls()
                    .map(|c| (c.name.clone(), c.result.clone()))
                    .collect(),
                reply,
                ..Default::default()
            });
        }
    }
    Err(Box::new(closest.unwrap_or_default()))
}

/// The call the sample's applicable `argument_equals_field` laws ask for: the first such law's
/// tool with every argument those laws ask of it, each the sample's field as written (so that a
/// tool keyed by several arguments gets them all in one call); else the call a `tool_called`
/// law asks of a tool that takes no argument.
pub fn law_reference_call(pack: &Pack, sample: &Sample) -> Option<CaseCall> {
    let asked = asked_arguments(pack, sample);
    let Some((tool, _, _)) = asked.first().cloned() else {
        return no_argument_call(pack, sample);
    };
    let mut arguments = Map::new();
    for (law_tool, argument, value) in asked {
        if law_tool == tool && !arguments.contains_key(&argument) {
            arguments.insert(argument, Value::String(value));
        }
    }
    Some(CaseCall {
        tool,
        arguments,
        result: None,
    })
}

/// A call to a tool that takes no argument, when an applicable `tool_called` law asks for it:
/// its arguments are known, since there are none.
fn no_argument_call(pack: &Pack, sample: &Sample) -> Option<CaseCall> {
    let takes_none = |tool: &str| {
        pack.tools.iter().any(|t| {
            t.name == tool
                && t.parameters
                    .as_ref()
                    .and_then(|p| p.get("properties"))
                    .and_then(Value::as_object)
                    .is_some_and(Map::is_empty)
        })
    };
    pack.laws
        .iter()
        .filter(|law| judge::applies(law, &sample.category, &sample.fields))
        .find_map(|law| match law.check() {
            Check::ToolCalled { tool } if takes_none(tool) => Some(CaseCall {
                tool: tool.clone(),
                arguments: Map::new(),
                result: None,
            }),
            _ => None,
        })
}

/// The (tool, argument, sample's value) of every applicable `argument_equals_field` law whose
/// field the sample has.
fn asked_arguments(pack: &Pack, sample: &Sample) -> Vec<(String, String, String)> {
    pack.laws
        .iter()
        .filter(|law| judge::applies(law, &sample.category, &sample.fields))
        .filter_map(|law| match law.check() {
            Check::ArgumentEqualsField {
                tool,
                argument,
                field,
                ..
            } => field_text(sample, field).map(|value| (tool.clone(), argument.clone(), value)),
            _ => None,
        })
        .collect()
}

/// A sample's field as text (a string as written, another value as JSON); `None` when absent
/// or null.
fn field_text(sample: &Sample, field: &str) -> Option<String> {
    sample.fields.get(field).and_then(|v| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

/// The replies `check` tries after a reference call whose result is `result`: one that names
/// the place (the field of the first applicable `reply_contains` law, else the call's values)
/// and restates the result's lines on one line, and "I could not find X.".
pub fn built_reference_replies(pack: &Pack, sample: &Sample, result: &str) -> Vec<String> {
    let Some(call) = law_reference_call(pack, sample) else {
        return Vec::new();
    };
    let values: Vec<String> = call
        .arguments
        .values()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let asked = values.join(" ");
    let named = pack
        .laws
        .iter()
        .filter(|law| judge::applies(law, &sample.category, &sample.fields))
        .find_map(|law| match law.check() {
            Check::ReplyContains {
                field: Some(field), ..
            } => field_text(sample, field),
            _ => None,
        })
        .unwrap_or_else(|| asked.clone());
    let facts: Vec<&str> = result
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    vec![
        format!("{named}: {}.", facts.join("; ")),
        format!("I could not find {asked}."),
    ]
}

/// Reference replies from the pack's own laws: the call its applicable `argument_equals_field`
/// laws ask for (each argument the sample's value as written), then a reply that
/// names the place (the field of its first applicable `reply_contains` law) and restates the
/// result's lines on one line, or "I could not find X."; and a plain answer with no call.
fn built_references(pack: &Pack, replayer: &Replayer, sample: &Sample) -> Vec<Reference> {
    let mut references = vec![Reference {
        calls: Vec::new(),
        reply: "Here is my answer to that.".into(),
    }];
    let Some(call) = law_reference_call(pack, sample) else {
        return references;
    };
    let result = replayer
        .transcript(std::slice::from_ref(&call), "", StopReason::Answered)
        .calls()
        .next()
        .map(|c| c.result.clone())
        .unwrap_or_default();
    for reply in built_reference_replies(pack, sample, &result) {
        references.push(Reference {
            calls: vec![call.clone()],
            reply,
        });
    }
    references
}
