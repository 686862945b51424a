//! Named, deterministic laws over a transcript: what a pack says good behaviour looks like.
//!
//! Laws come from a pack's `pack.toml` as an array of tables:
//!
//! ```toml
//! [[laws]]
//! name = "calls-weather-with-place-as-written"
//! kind = "argument_equals_field"
//! tool = "weather_lookup"
//! argument = "location"
//! field = "location"
//! fold = true
//! categories = ["plain_city", "city_country"]
//! ```
//!
//! Every law has a `name`, a `kind` and the kind's own keys; unknown keys are refused so a
//! misspelt option cannot be silently ignored. Scope keys common to all kinds:
//! `categories` (default: all), `except_categories`, `when_field` (apply only to samples
//! that have that field, non-null).
//!
//! Kinds (`LAW_KINDS`; keys and meaning on `Check` and in docs/packs.md): calls —
//! `tool_called`, `tool_not_called`, `call_count`, `argument_equals_field`, `argument_equals`,
//! `argument_matches`; the reply's text — `reply_contains`, `reply_matches` (with an optional
//! `unless`), `reply_not_matches`; the reply against the results — `reply_mentions_tool_value`,
//! `no_unsupported_numbers`, `reply_reports_result`; temperatures, by the one rule in `text` —
//! `no_unsupported_temperatures`, `reply_has_no_temperature`,
//! `reply_temperature_in_field_unit`; the run — `stop_reason_is`; the conversation (`exchange`)
//! — `asks_before_call`, `confirms_before_call`, `no_unapproved_write`, `calls_after`,
//! `argument_from_user`, `reply_mentions_last_result`. Kinds are generic: what is
//! particular to a pack (a tool's name, how its results read) lives in the pack's keys.
//!
//! `laws` holds the types and the load-time checks, which compile each law's check (one
//! function per kind); `compiled` the compiled check, built by one constructor per kind that
//! gives the function judging it; `pattern` what a regular expression can reach; `text` folding, numbers and temperatures; `why` a failed law's
//! cause in words. Which laws apply to a sample, and their verdict on a transcript, are here.

mod compiled;
mod exchange;
mod laws;
mod pattern;
pub mod text;
mod why;

use serde_json::{Map, Value};

use crate::eval::corpus::Sample;
use crate::eval::judgement::Judgement;
use crate::harness::transcript::Transcript;

pub use compiled::CallQuantifier;
use compiled::Evidence;
pub use laws::{Check, Law, LAW_KINDS};
pub use text::fold_text;
use text::{plain_number, TemperatureUnit};
pub use why::why_failed;

/// Applies every law that concerns this sample to the transcript.
///
/// A law that reads a sample field the sample lacks does not hold: it fails loudly rather
/// than passing silently. `check_sample` finds such pack mistakes before a run.
pub fn judge(
    laws: &[Law],
    category: &str,
    sample: &Map<String, Value>,
    prompt_text: &str,
    transcript: &Transcript,
) -> Judgement {
    let applicable: Vec<&Law> = laws
        .iter()
        .filter(|law| applies(law, category, sample))
        .collect();
    let evidence = Evidence {
        sample,
        prompt_text,
        transcript,
    };
    let failed: Vec<String> = applicable
        .iter()
        .filter(|law| !law.compiled().holds(&evidence))
        .map(|law| law.name.clone())
        .collect();
    Judgement {
        passed: failed.is_empty(),
        failed,
        applied: applicable.len(),
        applied_laws: applicable.iter().map(|law| law.name.clone()).collect(),
    }
}

/// [`judge`] on a corpus sample: its category, fields and prompt.
pub fn judge_sample(laws: &[Law], sample: &Sample, transcript: &Transcript) -> Judgement {
    judge(
        laws,
        &sample.category,
        &sample.fields,
        sample.prompt_text(),
        transcript,
    )
}

/// A transcript's judgement and whether a fixture gap leaves it undecided, as a journal keeps
/// them: what a run computes for a unit, and what judging its transcript again recomputes.
pub fn judge_unit(laws: &[Law], sample: &Sample, transcript: &Transcript) -> (Judgement, bool) {
    let judgement = judge_sample(laws, sample, transcript);
    // A gap leaves the sample undecided unless it had already failed before any answer.
    let gapped = has_fixture_gap(transcript)
        && !failed_before_any_answer(
            laws,
            &judgement,
            &sample.category,
            &sample.fields,
            sample.prompt_text(),
            transcript,
        );
    (judgement, gapped)
}

/// Lists the sample fields that applicable laws read but the sample lacks (or, for a unit,
/// holds something that names no unit).
pub fn check_sample(
    laws: &[Law],
    category: &str,
    sample: &Map<String, Value>,
) -> Result<(), String> {
    let missing: Vec<String> = laws
        .iter()
        .filter(|law| applies(law, category, sample))
        .filter_map(|law| {
            let field = match law.check() {
                Check::ArgumentEqualsField { field, .. }
                | Check::ReplyTemperatureInFieldUnit { field } => field,
                Check::ReplyContains {
                    field: Some(field), ..
                } => field,
                Check::ReplyReportsResult {
                    lines_field: Some(field),
                    ..
                } => field,
                _ => return None,
            };
            let Some(value) = field_value(sample, field) else {
                return Some(format!(
                    "law `{}` reads field `{field}`, which the sample lacks",
                    law.name
                ));
            };
            // A law compares text: an empty or structured value could never match a reply.
            let usable = match value {
                Value::String(text) => !text.trim().is_empty(),
                Value::Number(_) | Value::Bool(_) => true,
                Value::Array(items) => !items.is_empty() && items.iter().all(|i| i.is_string()),
                Value::Null | Value::Object(_) => false,
            };
            if !usable {
                return Some(format!(
                    "law `{}` reads field `{field}`, which is {value}: give it the text the law looks for",
                    law.name
                ));
            }
            let names_a_unit = TemperatureUnit::parse(&value_text(value)).is_some();
            let wants_a_unit = matches!(law.check(), Check::ReplyTemperatureInFieldUnit { .. });
            (wants_a_unit && !names_a_unit).then(|| {
                format!(
                    "law `{}` reads field `{field}` as a temperature unit (C or F), but it is {value}",
                    law.name
                )
            })
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join("\n"))
    }
}

/// Whether a fixture was missing for any call: such runs say nothing about the wording.
pub fn has_fixture_gap(transcript: &Transcript) -> bool {
    transcript
        .calls()
        .any(|call| call.meta.get("gap").and_then(Value::as_bool) == Some(true))
}

pub fn applies(law: &Law, category: &str, sample: &Map<String, Value>) -> bool {
    let category_listed = law
        .categories
        .as_ref()
        .is_none_or(|list| list.iter().any(|c| c == category));
    let category_excepted = law.except_categories.iter().any(|c| c == category);
    let field_present = law
        .when_field
        .as_ref()
        .is_none_or(|field| field_value(sample, field).is_some());
    category_listed && !category_excepted && field_present
}

fn field_value<'a>(sample: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    sample.get(field).filter(|v| !v.is_null())
}

/// Text form of a JSON value as a model or a corpus would write it.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn values_equal(actual: &Value, expected: &Value, fold: bool) -> bool {
    let (actual, expected) = (value_text(actual), value_text(expected));
    if let (Some(a), Some(e)) = (plain_number(&actual), plain_number(&expected)) {
        return a == e;
    }
    if fold {
        fold_text(&actual) == fold_text(&expected)
    } else {
        actual == expected
    }
}

/// Whether a failed law already failed on the first round, before any tool answered, for a law
/// that reads only the calls. Such a failure is scored even when a later call hit a fixture gap:
/// no recording could have changed what the model first asked for.
pub fn failed_before_any_answer(
    laws: &[Law],
    judgement: &Judgement,
    category: &str,
    sample: &Map<String, Value>,
    prompt_text: &str,
    transcript: &Transcript,
) -> bool {
    let Some(first) = transcript.rounds.first() else {
        return false;
    };
    let first_round = Transcript {
        rounds: vec![first.clone()],
        ..transcript.clone()
    };
    laws.iter()
        .filter(|law| judgement.failed.contains(&law.name))
        .filter(|law| {
            matches!(
                law.check(),
                Check::ToolCalled { .. }
                    | Check::ToolNotCalled { .. }
                    | Check::ArgumentEqualsField { .. }
                    | Check::ArgumentEquals { .. }
                    | Check::ArgumentMatches { .. }
            )
        })
        .any(|law| {
            !judge(
                std::slice::from_ref(law),
                category,
                sample,
                prompt_text,
                &first_round,
            )
            .passed
        })
}

#[cfg(test)]
mod exchange_tests;
#[cfg(test)]
mod tests;

/// Which reply of a run a law judges, as `score` draws it: the answer's text, the asking of the
/// user before a call, or neither (the calls, the stop, the run as a whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judges {
    /// The final answer's text.
    Answer,
    /// Whether, and how, the model asked the user before acting.
    Asking,
    /// Anything else.
    Other,
}

impl Check {
    /// What of a run this kind of law reads.
    pub fn judges(&self) -> Judges {
        match self {
            Check::ReplyContains { .. }
            | Check::ReplyMatches { .. }
            | Check::ReplyNotMatches { .. }
            | Check::ReplyMentionsToolValue { .. }
            | Check::NoUnsupportedNumbers { .. }
            | Check::NoUnsupportedTemperatures { .. }
            | Check::ReplyHasNoTemperature {}
            | Check::ReplyTemperatureInFieldUnit { .. }
            | Check::ReplyReportsResult { .. }
            | Check::ReplyMentionsLastResult { .. } => Judges::Answer,
            Check::AsksBeforeCall { .. } | Check::ConfirmsBeforeCall { .. } => Judges::Asking,
            Check::ToolCalled { .. }
            | Check::ToolNotCalled { .. }
            | Check::CallCount { .. }
            | Check::ArgumentEqualsField { .. }
            | Check::ArgumentEquals { .. }
            | Check::ArgumentMatches { .. }
            | Check::StopReasonIs { .. }
            | Check::NoUnapprovedWrite {}
            | Check::CallsAfter { .. }
            | Check::ArgumentFromUser { .. } => Judges::Other,
        }
    }
}
