//! A law's check as the judge runs it: compiled once at load (`laws::compile`), its patterns
//! held as `Regex` and its either-or keys as enums, by one constructor per law kind that gives
//! the function saying whether the check holds for a transcript.

use std::sync::Arc;

use regex::Regex;
use serde_json::{Map, Value};

use super::text::{self, contains, fold_text, temperatures_in, Temperature, TemperatureUnit};
use super::{field_value, value_text, values_equal};
use crate::harness::transcript::{CallRecord, Transcript};
use serde::{Deserialize, Serialize};

/// Which calls to the named tool an argument law inspects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallQuantifier {
    /// At least one call to the tool satisfies the check.
    #[default]
    Any,
    /// There is at least one call to the tool and every one satisfies the check.
    Every,
}

/// A law's check as the judge runs it: whether it holds on the evidence. Built once at load by
/// the constructor of its kind below, with everything judging that kind needs; see `Check`
/// for what each kind means.
#[derive(Clone)]
pub(super) struct CompiledCheck(Arc<dyn Fn(&Evidence) -> bool + Send + Sync>);

impl std::fmt::Debug for CompiledCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledCheck")
    }
}

/// The argument of a tool's calls that an argument law reads, and which of those calls count.
#[derive(Debug, Clone)]
pub(super) struct ToolArgument {
    pub tool: String,
    pub argument: String,
    pub calls: CallQuantifier,
}

/// What `reply_contains` looks for: its `text`, or the value of the sample's `field`.
#[derive(Debug, Clone)]
pub(super) enum Needle {
    Text(String),
    Field(String),
}

/// Where `reply_mentions_tool_value` reads its value in a result.
#[derive(Debug, Clone)]
pub(super) enum ResultValue {
    /// The line at this 0-based index, trimmed.
    Line { index: usize },
    /// Capture group 1 of the pattern, trimmed.
    Capture(Regex),
}

/// The results a temperature or report law counts: non-error results of the tool (or any
/// tool) that match `success` when it is given.
#[derive(Debug, Clone)]
pub(super) struct CountedResults {
    pub tool: Option<String>,
    pub success: Option<Regex>,
}

/// The keys of a `reply_reports_result` law.
#[derive(Debug, Clone)]
pub(super) struct ReportsResult {
    pub results: CountedResults,
    pub unless: Option<Regex>,
    pub facts: Vec<Regex>,
    /// Folded once here, as every comparison reads them folded.
    pub weak_words: Vec<String>,
    pub lines_field: Option<String>,
    pub allow_rounding: bool,
}

/// What a law is judged on.
pub(super) struct Evidence<'a> {
    pub sample: &'a Map<String, Value>,
    pub prompt_text: &'a str,
    pub transcript: &'a Transcript,
}

impl Evidence<'_> {
    fn reply(&self) -> &str {
        &self.transcript.reply
    }
}

impl CompiledCheck {
    pub(super) fn new(holds: impl Fn(&Evidence) -> bool + Send + Sync + 'static) -> CompiledCheck {
        CompiledCheck(Arc::new(holds))
    }

    pub(super) fn holds(&self, on: &Evidence) -> bool {
        (self.0)(on)
    }

    pub(super) fn tool_called(tool: String) -> CompiledCheck {
        Self::new(move |on| on.transcript.calls().any(|c| c.name == tool))
    }

    pub(super) fn tool_not_called(tool: Option<String>) -> CompiledCheck {
        Self::new(move |on| tool_not_called(on.transcript, tool.as_deref()))
    }

    pub(super) fn call_count(
        tool: Option<String>,
        min: Option<u32>,
        max: Option<u32>,
    ) -> CompiledCheck {
        Self::new(move |on| call_count_within(on.transcript, tool.as_deref(), min, max))
    }

    pub(super) fn argument_equals_field(
        argument: ToolArgument,
        field: String,
        fold: bool,
    ) -> CompiledCheck {
        Self::new(move |on| argument_equals_field(on, &argument, &field, fold))
    }

    pub(super) fn argument_equals(
        argument: ToolArgument,
        value: Value,
        fold: bool,
    ) -> CompiledCheck {
        Self::new(move |on| {
            argument.holds(on.transcript, |actual| values_equal(actual, &value, fold))
        })
    }

    pub(super) fn argument_matches(argument: ToolArgument, pattern: Regex) -> CompiledCheck {
        Self::new(move |on| {
            argument.holds(on.transcript, |actual| {
                pattern.is_match(&value_text(actual))
            })
        })
    }

    pub(super) fn reply_contains(needle: Needle, fold: bool) -> CompiledCheck {
        Self::new(move |on| reply_contains(on, &needle, fold))
    }

    pub(super) fn reply_matches(pattern: Regex, unless: Option<Regex>) -> CompiledCheck {
        Self::new(move |on| reply_matches(on.reply(), &pattern, unless.as_ref()))
    }

    pub(super) fn reply_not_matches(pattern: Regex) -> CompiledCheck {
        Self::new(move |on| !pattern.is_match(on.reply()))
    }

    pub(super) fn reply_mentions_tool_value(
        tool: Option<String>,
        value: ResultValue,
        fold: bool,
    ) -> CompiledCheck {
        Self::new(move |on| reply_mentions_tool_value(on, tool.as_deref(), &value, fold))
    }

    pub(super) fn no_unsupported_numbers(
        followed_by: Option<Vec<String>>,
        allow_rounding: bool,
    ) -> CompiledCheck {
        Self::new(move |on| no_unsupported_numbers(on, followed_by.as_deref(), allow_rounding))
    }

    pub(super) fn no_unsupported_temperatures(
        results: CountedResults,
        allow_rounding: bool,
    ) -> CompiledCheck {
        Self::new(move |on| no_unsupported_temperatures(on, &results, allow_rounding))
    }

    pub(super) fn reply_has_no_temperature() -> CompiledCheck {
        Self::new(|on| temperatures_in(on.reply()).is_empty())
    }

    pub(super) fn reply_temperature_in_field_unit(field: String) -> CompiledCheck {
        Self::new(move |on| reply_temperature_in_field_unit(on, &field))
    }

    pub(super) fn reply_reports_result(report: ReportsResult) -> CompiledCheck {
        Self::new(move |on| report.holds(on))
    }

    pub(super) fn stop_reason_is(reason: String) -> CompiledCheck {
        Self::new(move |on| on.transcript.stop.name() == reason)
    }
}

fn names_tool(call: &CallRecord, tool: Option<&str>) -> bool {
    tool.is_none_or(|tool| call.name == tool)
}

fn tool_not_called(transcript: &Transcript, tool: Option<&str>) -> bool {
    !transcript.calls().any(|c| names_tool(c, tool))
}

fn call_count_within(
    transcript: &Transcript,
    tool: Option<&str>,
    min: Option<u32>,
    max: Option<u32>,
) -> bool {
    let count = transcript.calls().filter(|c| names_tool(c, tool)).count() as u32;
    min.is_none_or(|min| count >= min) && max.is_none_or(|max| count <= max)
}

fn argument_equals_field(on: &Evidence, argument: &ToolArgument, field: &str, fold: bool) -> bool {
    match field_value(on.sample, field) {
        Some(expected) => {
            argument.holds(on.transcript, |actual| values_equal(actual, expected, fold))
        }
        None => false,
    }
}

impl ToolArgument {
    /// Applies `check` to the argument of the tool's calls; a call lacking the argument fails it.
    fn holds(&self, transcript: &Transcript, check: impl Fn(&Value) -> bool) -> bool {
        let mut outcomes = transcript
            .calls()
            .filter(|c| c.name == self.tool)
            .map(|call| {
                call.arguments
                    .get(&self.argument)
                    .filter(|v| !v.is_null())
                    .is_some_and(&check)
            });
        match self.calls {
            CallQuantifier::Any => outcomes.any(|ok| ok),
            CallQuantifier::Every => {
                let all: Vec<bool> = outcomes.collect();
                !all.is_empty() && all.into_iter().all(|ok| ok)
            }
        }
    }
}

fn reply_contains(on: &Evidence, needle: &Needle, fold: bool) -> bool {
    let needle = match needle {
        Needle::Text(text) => text.clone(),
        Needle::Field(field) => match field_value(on.sample, field) {
            Some(value) => value_text(value),
            None => return false,
        },
    };
    contains(on.reply(), &needle, fold)
}

fn reply_matches(reply: &str, pattern: &Regex, unless: Option<&Regex>) -> bool {
    pattern.is_match(reply) && !unless.is_some_and(|unless| unless.is_match(reply))
}

fn reply_mentions_tool_value(
    on: &Evidence,
    tool: Option<&str>,
    value: &ResultValue,
    fold: bool,
) -> bool {
    tool_values(on.transcript, tool, value)
        .iter()
        .any(|value| contains(on.reply(), value, fold))
}

/// Values a tool result offers to the reply; empty values are dropped, as every text contains them.
fn tool_values(transcript: &Transcript, tool: Option<&str>, value: &ResultValue) -> Vec<String> {
    transcript
        .calls()
        .filter(|c| names_tool(c, tool) && !c.is_error)
        .filter_map(|call| value.read(&call.result))
        .collect()
}

impl ResultValue {
    /// The value this result offers, trimmed; none when it is empty, as every text contains it.
    pub(super) fn read(&self, result: &str) -> Option<String> {
        let value = match self {
            ResultValue::Capture(regex) => regex
                .captures(result)
                .and_then(|caps| caps.get(1))
                .map(|m| m.as_str().trim().to_string()),
            ResultValue::Line { index } => result.lines().nth(*index).map(|l| l.trim().to_string()),
        }?;
        (!value.is_empty()).then_some(value)
    }
}

fn no_unsupported_numbers(on: &Evidence, units: Option<&[String]>, allow_rounding: bool) -> bool {
    use text::{followed_by_unit, numbers_in, round_to, WrittenNumber};
    let reply = on.reply();
    let mut sources: Vec<WrittenNumber> = numbers_in(on.prompt_text)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for call in on.transcript.calls() {
        sources.extend(numbers_in(&call.result).into_iter().map(|(n, _)| n));
    }
    numbers_in(reply)
        .into_iter()
        .filter(|(_, end)| units.is_none_or(|units| followed_by_unit(reply, *end, units)))
        .all(|(claimed, _)| {
            sources.iter().any(|source| {
                source.value == claimed.value
                    || (allow_rounding && round_to(source.value, claimed.decimals) == claimed.value)
            })
        })
}

impl CountedResults {
    fn in_transcript<'t>(&self, transcript: &'t Transcript) -> Vec<&'t str> {
        transcript
            .calls()
            .filter(|c| names_tool(c, self.tool.as_deref()) && !c.is_error)
            .filter(|c| self.success.as_ref().is_none_or(|s| s.is_match(&c.result)))
            .map(|c| c.result.as_str())
            .collect()
    }
}

fn no_unsupported_temperatures(
    on: &Evidence,
    results: &CountedResults,
    allow_rounding: bool,
) -> bool {
    let sources: Vec<Temperature> = results
        .in_transcript(on.transcript)
        .into_iter()
        .flat_map(temperatures_in)
        .collect();
    temperatures_in(on.reply()).iter().all(|claim| {
        sources
            .iter()
            .any(|source| text::supports(source, claim, allow_rounding))
    })
}

fn reply_temperature_in_field_unit(on: &Evidence, field: &str) -> bool {
    let asked = field_value(on.sample, field)
        .map(value_text)
        .and_then(|name| TemperatureUnit::parse(&name));
    asked.is_some_and(|asked| {
        temperatures_in(on.reply())
            .iter()
            .any(|t| t.unit == Some(asked))
    })
}

/// The strings a sample field holds: a string, or a list of them.
fn field_strings(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().map(value_text).collect(),
        other => vec![value_text(other)],
    }
}

impl ReportsResult {
    fn holds(&self, on: &Evidence) -> bool {
        let reply = on.reply();
        if self.unless.as_ref().is_some_and(|u| u.is_match(reply)) {
            return false; // the reply only announces a lookup
        }
        let labels = match &self.lines_field {
            Some(field) => match field_value(on.sample, field) {
                Some(value) => Some(field_strings(value)),
                None => return false,
            },
            None => None,
        };
        let claims = temperatures_in(reply);
        let reply_words: Vec<String> = fold_text(reply).split(' ').map(str::to_string).collect();
        for result in self.results.in_transcript(on.transcript) {
            for line in result.lines() {
                if let Some(labels) = &labels {
                    if !labels.iter().any(|label| contains(line, label, true)) {
                        continue;
                    }
                }
                let sources = temperatures_in(line);
                let reports_temperature = claims.iter().any(|claim| {
                    sources
                        .iter()
                        .any(|source| text::supports(source, claim, self.allow_rounding))
                });
                if reports_temperature {
                    return true;
                }
                let mut phrases = self
                    .facts
                    .iter()
                    .flat_map(|regex| regex.captures_iter(line))
                    .filter_map(|caps| caps.get(1).map(|m| m.as_str().to_string()));
                if phrases
                    .any(|phrase| names_phrase(reply, &reply_words, &phrase, &self.weak_words))
                {
                    return true;
                }
            }
        }
        false
    }
}

/// The reply names the phrase whole, or one of its words outside `weak` (folded words). The
/// reply may leave out the phrase's qualifier ("rain" for "Light rain") but not put in another:
/// a weak word right before the named word must be in the phrase ("partly cloudy" is not
/// "Cloudy").
fn names_phrase(reply: &str, reply_words: &[String], phrase: &str, weak: &[String]) -> bool {
    let phrase_words: Vec<String> = fold_text(phrase).split(' ').map(str::to_string).collect();
    let strong: Vec<&String> = phrase_words
        .iter()
        .filter(|word| word.chars().count() >= 3 && !weak.contains(word))
        .collect();
    if strong.is_empty() {
        return contains(reply, phrase, true);
    }
    strong.into_iter().any(|word| {
        reply_words.iter().enumerate().any(|(i, said)| {
            let qualifier_fits = i
                .checked_sub(1)
                .map(|before| &reply_words[before])
                .filter(|before| weak.contains(before))
                .is_none_or(|before| phrase_words.contains(before));
            word_stem(said) == word_stem(word) && qualifier_fits
        })
    })
}

/// A word without one "-ing", "-y", "-s" or "-e" ending and a doubled last letter: "rainy",
/// "raining" and "rains" give "rain"; "sunny" gives "sun"; "drizzle" and "drizzly" "drizzl".
fn word_stem(word: &str) -> &str {
    let stem = ["ing", "y", "s", "e"]
        .iter()
        .find_map(|suffix| {
            word.strip_suffix(suffix)
                .filter(|stem| stem.chars().count() >= 3)
        })
        .unwrap_or(word);
    let mut chars = stem.chars().rev();
    match (chars.next(), chars.next()) {
        (Some(last), Some(before)) if last == before && stem.chars().count() > 3 => {
            &stem[..stem.len() - last.len_utf8()]
        }
        _ => stem,
    }
}
