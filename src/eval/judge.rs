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

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::harness::transcript::{CallRecord, Transcript};

/// One named expectation, with the samples it applies to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct Law {
    pub name: String,
    /// Categories the law applies to; `None` means every category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except_categories: Vec<String>,
    /// The law applies only to samples where this field is present and not null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_field: Option<String>,
    #[serde(flatten)]
    pub check: Check,
}

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

/// What a law checks. `fold` means: compare case-insensitively, ignoring punctuation and
/// runs of whitespace; folded containment matches whole words only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    ToolCalled {
        tool: String,
    },
    /// The tool (or, when omitted, any tool) is never called.
    ToolNotCalled {
        tool: Option<String>,
    },
    /// Number of calls (to `tool`, or to any tool) lies in `min..=max`.
    CallCount {
        tool: Option<String>,
        min: Option<u32>,
        max: Option<u32>,
    },
    /// The argument equals the named field of the corpus sample.
    ArgumentEqualsField {
        tool: String,
        argument: String,
        field: String,
        #[serde(default)]
        fold: bool,
        #[serde(default)]
        calls: CallQuantifier,
    },
    ArgumentEquals {
        tool: String,
        argument: String,
        value: Value,
        #[serde(default)]
        fold: bool,
        #[serde(default)]
        calls: CallQuantifier,
    },
    ArgumentMatches {
        tool: String,
        argument: String,
        pattern: String,
        #[serde(default)]
        calls: CallQuantifier,
    },
    /// The reply contains `text`, or the value of the sample's `field` (exactly one of them).
    ReplyContains {
        text: Option<String>,
        field: Option<String>,
        #[serde(default)]
        fold: bool,
    },
    ReplyMatches {
        pattern: String,
    },
    ReplyNotMatches {
        pattern: String,
    },
    /// The reply mentions a value read from a (non-error) result of `tool` (or any tool):
    /// either line `from_result_line` (1-based, trimmed) or capture group 1 of
    /// `from_result_pattern`. Exactly one of the two is given. Fails when no value was found.
    ReplyMentionsToolValue {
        tool: Option<String>,
        from_result_line: Option<usize>,
        from_result_pattern: Option<String>,
        #[serde(default)]
        fold: bool,
    },
    /// Every number in the reply appears in some tool result or in the user prompt.
    /// With `followed_by`, only numbers followed by one of those units are checked.
    /// With `allow_rounding`, a source number rounded to the reply's decimals also counts.
    NoUnsupportedNumbers {
        followed_by: Option<Vec<String>>,
        #[serde(default)]
        allow_rounding: bool,
    },
    /// The run stopped for this reason, named as in `StopReason::name()`.
    StopReasonIs {
        reason: String,
    },
}

impl TryFrom<Map<String, Value>> for Law {
    type Error = String;

    /// Scope keys are taken out here so that the kind's own keys can be checked strictly.
    fn try_from(mut table: Map<String, Value>) -> Result<Self, Self::Error> {
        let name = match table.remove("name") {
            Some(Value::String(name)) => name,
            Some(other) => return Err(format!("law name must be a string, got {other}")),
            None => return Err("law without a `name`".to_string()),
        };
        let in_law = |e: serde_json::Error| format!("law `{name}`: {e}");
        let categories = table
            .remove("categories")
            .map(serde_json::from_value)
            .transpose()
            .map_err(in_law)?;
        let except_categories = table
            .remove("except_categories")
            .map(serde_json::from_value)
            .transpose()
            .map_err(in_law)?
            .unwrap_or_default();
        let when_field = table
            .remove("when_field")
            .map(serde_json::from_value)
            .transpose()
            .map_err(in_law)?;
        let kind = match table.get("kind") {
            Some(Value::String(kind)) => kind.clone(),
            Some(other) => {
                return Err(format!(
                    "law `{name}`: field `kind` must be a string, got {other}"
                ))
            }
            None => return Err(format!("law `{name}`: field `kind` is missing")),
        };
        let check = serde_json::from_value(Value::Object(table)).map_err(|e| {
            // serde names an unknown kind only as a "variant"; say which key holds it.
            if e.to_string().starts_with("unknown variant") {
                format!(
                    "law `{name}`: field `kind`: unknown law kind `{kind}`; known: {}",
                    LAW_KINDS.join(", ")
                )
            } else {
                in_law(e)
            }
        })?;
        Ok(Law {
            name,
            categories,
            except_categories,
            when_field,
            check,
        })
    }
}

/// Every `kind` a law may have, as written in `pack.toml`.
pub const LAW_KINDS: [&str; 12] = [
    "tool_called",
    "tool_not_called",
    "call_count",
    "argument_equals_field",
    "argument_equals",
    "argument_matches",
    "reply_contains",
    "reply_matches",
    "reply_not_matches",
    "reply_mentions_tool_value",
    "no_unsupported_numbers",
    "stop_reason_is",
];

impl Check {
    /// The tool the law names, if it names one.
    pub fn tool(&self) -> Option<&str> {
        match self {
            Check::ToolCalled { tool }
            | Check::ArgumentEqualsField { tool, .. }
            | Check::ArgumentEquals { tool, .. }
            | Check::ArgumentMatches { tool, .. } => Some(tool),
            Check::ToolNotCalled { tool }
            | Check::CallCount { tool, .. }
            | Check::ReplyMentionsToolValue { tool, .. } => tool.as_deref(),
            Check::ReplyContains { .. }
            | Check::ReplyMatches { .. }
            | Check::ReplyNotMatches { .. }
            | Check::NoUnsupportedNumbers { .. }
            | Check::StopReasonIs { .. } => None,
        }
    }
}

/// The verdict of all applicable laws on one transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    pub passed: bool,
    /// Names of the applicable laws that did not hold, in law order.
    pub failed: Vec<String>,
    /// How many laws applied to this sample.
    pub applied: usize,
    /// Names of the laws that applied, in law order (empty in journals that predate it).
    #[serde(default)]
    pub applied_laws: Vec<String>,
}

const STOP_REASON_NAMES: [&str; 4] = ["answered", "round_budget", "token_budget", "error"];

/// Strings a pattern must fail on at least once; one that matches all of them is vacuous.
const VACUITY_PROBES: [&str; 10] = [
    "",
    " ",
    "\n",
    "a",
    "Z",
    "0",
    "!?",
    "hello world",
    "The weather in Paris is 21°C.\nLight rain.",
    "ünïcødé ☂",
];

/// Refuses laws that cannot fail (or cannot pass), and duplicate names.
/// Every problem found is listed, one per line, each naming its law.
pub fn validate(laws: &[Law]) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    for law in laws {
        if !seen.insert(law.name.as_str()) {
            problems.push(format!("law `{}`: duplicate name", law.name));
        }
        if let Err(problem) = validate_one(law) {
            problems.push(problem);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Checks one law on its own (not against the others); the message names the law.
pub fn validate_one(law: &Law) -> Result<(), String> {
    validate_law(law).map_err(|problem| format!("law `{}`: {problem}", law.name))
}

fn validate_law(law: &Law) -> Result<(), String> {
    if law.name.trim().is_empty() {
        return Err("empty name".into());
    }
    if let Some(categories) = &law.categories {
        if categories.is_empty() {
            return Err("`categories` is empty, so the law applies nowhere".into());
        }
        if categories.iter().all(|c| law.except_categories.contains(c)) {
            return Err("every category in `categories` is also excepted".into());
        }
    }
    if law
        .when_field
        .as_deref()
        .is_some_and(|f| f.trim().is_empty())
    {
        return Err("empty `when_field`".into());
    }
    match &law.check {
        Check::ToolCalled { tool } => non_empty("tool", tool),
        Check::ToolNotCalled { tool } => tool.as_deref().map_or(Ok(()), |t| non_empty("tool", t)),
        Check::CallCount { tool, min, max } => {
            tool.as_deref().map_or(Ok(()), |t| non_empty("tool", t))?;
            match (min, max) {
                (None | Some(0), None) => {
                    Err("no `max` and no `min` above 0: any count passes".into())
                }
                (Some(min), Some(max)) if min > max => Err(format!("min {min} exceeds max {max}")),
                _ => Ok(()),
            }
        }
        Check::ArgumentEqualsField {
            tool,
            argument,
            field,
            ..
        } => {
            non_empty("tool", tool)?;
            non_empty("argument", argument)?;
            non_empty("field", field)
        }
        Check::ArgumentEquals {
            tool,
            argument,
            value,
            ..
        } => {
            non_empty("tool", tool)?;
            non_empty("argument", argument)?;
            if value.is_null() {
                return Err("`value` is null".into());
            }
            Ok(())
        }
        Check::ArgumentMatches {
            tool,
            argument,
            pattern,
            ..
        } => {
            non_empty("tool", tool)?;
            non_empty("argument", argument)?;
            validate_pattern("pattern", pattern, 0)
        }
        Check::ReplyContains { text, field, fold } => match (text, field) {
            (Some(text), None) => {
                let effective = if *fold { fold_text(text) } else { text.clone() };
                if effective.trim().is_empty() {
                    return Err(
                        "`text` is empty (after folding), so every reply contains it".into(),
                    );
                }
                Ok(())
            }
            (None, Some(field)) => non_empty("field", field),
            _ => Err("give exactly one of `text` and `field`".into()),
        },
        Check::ReplyMatches { pattern } | Check::ReplyNotMatches { pattern } => {
            validate_pattern("pattern", pattern, 0)
        }
        Check::ReplyMentionsToolValue {
            tool,
            from_result_line,
            from_result_pattern,
            ..
        } => {
            tool.as_deref().map_or(Ok(()), |t| non_empty("tool", t))?;
            match (from_result_line, from_result_pattern) {
                (Some(0), None) => Err("`from_result_line` counts from 1".into()),
                (Some(_), None) => Ok(()),
                (None, Some(pattern)) => validate_pattern("from_result_pattern", pattern, 1),
                _ => Err("give exactly one of `from_result_line` and `from_result_pattern`".into()),
            }
        }
        Check::NoUnsupportedNumbers { followed_by, .. } => match followed_by {
            Some(units) if units.is_empty() => {
                Err("`followed_by` is empty; omit it to check every number".into())
            }
            Some(units) if units.iter().any(|u| u.trim().is_empty()) => {
                Err("`followed_by` holds an empty unit".into())
            }
            _ => Ok(()),
        },
        Check::StopReasonIs { reason } => {
            if STOP_REASON_NAMES.contains(&reason.as_str()) {
                Ok(())
            } else {
                Err(format!(
                    "unknown stop reason `{reason}`; known: {}",
                    STOP_REASON_NAMES.join(", ")
                ))
            }
        }
    }
}

fn non_empty(key: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        Err(format!("empty `{key}`"))
    } else {
        Ok(())
    }
}

/// `key` is the law's key holding the pattern, named in every problem.
fn validate_pattern(key: &str, pattern: &str, capture_groups: usize) -> Result<(), String> {
    if pattern.is_empty() {
        return Err(format!("field `{key}`: empty pattern"));
    }
    let regex = Regex::new(pattern).map_err(|e| format!("field `{key}`: bad pattern: {e}"))?;
    if regex.captures_len() - 1 < capture_groups {
        return Err(format!(
            "field `{key}`: pattern `{pattern}` needs a capture group"
        ));
    }
    if VACUITY_PROBES.iter().all(|probe| regex.is_match(probe)) {
        return Err(format!(
            "field `{key}`: pattern `{pattern}` matches any text"
        ));
    }
    Ok(())
}

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
    let failed: Vec<String> = applicable
        .iter()
        .filter(|law| !holds(&law.check, sample, prompt_text, transcript))
        .map(|law| law.name.clone())
        .collect();
    Judgement {
        passed: failed.is_empty(),
        failed,
        applied: applicable.len(),
        applied_laws: applicable.iter().map(|law| law.name.clone()).collect(),
    }
}

/// Lists the sample fields that applicable laws read but the sample lacks.
pub fn check_sample(
    laws: &[Law],
    category: &str,
    sample: &Map<String, Value>,
) -> Result<(), String> {
    let missing: Vec<String> = laws
        .iter()
        .filter(|law| applies(law, category, sample))
        .filter_map(|law| {
            let field = match &law.check {
                Check::ArgumentEqualsField { field, .. } => field,
                Check::ReplyContains {
                    field: Some(field), ..
                } => field,
                _ => return None,
            };
            field_value(sample, field).is_none().then(|| {
                format!(
                    "law `{}` reads field `{field}`, which the sample lacks",
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

fn holds(
    check: &Check,
    sample: &Map<String, Value>,
    prompt_text: &str,
    transcript: &Transcript,
) -> bool {
    let reply = transcript.reply.as_str();
    match check {
        Check::ToolCalled { tool } => transcript.calls().any(|c| &c.name == tool),
        Check::ToolNotCalled { tool } => {
            !transcript.calls().any(|c| names_tool(c, tool.as_deref()))
        }
        Check::CallCount { tool, min, max } => {
            let count = transcript
                .calls()
                .filter(|c| names_tool(c, tool.as_deref()))
                .count() as u32;
            min.is_none_or(|min| count >= min) && max.is_none_or(|max| count <= max)
        }
        Check::ArgumentEqualsField {
            tool,
            argument,
            field,
            fold,
            calls,
        } => match field_value(sample, field) {
            Some(expected) => argument_holds(transcript, tool, argument, *calls, |actual| {
                values_equal(actual, expected, *fold)
            }),
            None => false,
        },
        Check::ArgumentEquals {
            tool,
            argument,
            value,
            fold,
            calls,
        } => argument_holds(transcript, tool, argument, *calls, |actual| {
            values_equal(actual, value, *fold)
        }),
        Check::ArgumentMatches {
            tool,
            argument,
            pattern,
            calls,
        } => match Regex::new(pattern) {
            Ok(regex) => argument_holds(transcript, tool, argument, *calls, |actual| {
                regex.is_match(&value_text(actual))
            }),
            Err(_) => false,
        },
        Check::ReplyContains { text, field, fold } => {
            let needle = match (text, field) {
                (Some(text), _) => text.clone(),
                (None, Some(field)) => match field_value(sample, field) {
                    Some(value) => value_text(value),
                    None => return false,
                },
                (None, None) => return false,
            };
            contains(reply, &needle, *fold)
        }
        Check::ReplyMatches { pattern } => Regex::new(pattern).is_ok_and(|r| r.is_match(reply)),
        Check::ReplyNotMatches { pattern } => Regex::new(pattern).is_ok_and(|r| !r.is_match(reply)),
        Check::ReplyMentionsToolValue {
            tool,
            from_result_line,
            from_result_pattern,
            fold,
        } => {
            let values = tool_values(
                transcript,
                tool.as_deref(),
                *from_result_line,
                from_result_pattern.as_deref(),
            );
            values.iter().any(|value| contains(reply, value, *fold))
        }
        Check::NoUnsupportedNumbers {
            followed_by,
            allow_rounding,
        } => numbers_supported(
            reply,
            followed_by.as_deref(),
            *allow_rounding,
            prompt_text,
            transcript,
        ),
        Check::StopReasonIs { reason } => transcript.stop.name() == reason,
    }
}

fn names_tool(call: &CallRecord, tool: Option<&str>) -> bool {
    tool.is_none_or(|tool| call.name == tool)
}

/// Applies `check` to the argument of the tool's calls; a call lacking the argument fails it.
fn argument_holds(
    transcript: &Transcript,
    tool: &str,
    argument: &str,
    quantifier: CallQuantifier,
    check: impl Fn(&Value) -> bool,
) -> bool {
    let mut outcomes = transcript.calls().filter(|c| c.name == tool).map(|call| {
        call.arguments
            .get(argument)
            .filter(|v| !v.is_null())
            .is_some_and(&check)
    });
    match quantifier {
        CallQuantifier::Any => outcomes.any(|ok| ok),
        CallQuantifier::Every => {
            let all: Vec<bool> = outcomes.collect();
            !all.is_empty() && all.into_iter().all(|ok| ok)
        }
    }
}

/// Values a tool result offers to the reply; empty values are dropped, as every text contains them.
fn tool_values(
    transcript: &Transcript,
    tool: Option<&str>,
    line: Option<usize>,
    pattern: Option<&str>,
) -> Vec<String> {
    let regex = match pattern.map(Regex::new).transpose() {
        Ok(regex) => regex,
        Err(_) => return Vec::new(),
    };
    transcript
        .calls()
        .filter(|c| names_tool(c, tool) && !c.is_error)
        .filter_map(|call| match (&regex, line) {
            (Some(regex), _) => regex
                .captures(&call.result)
                .and_then(|caps| caps.get(1))
                .map(|m| m.as_str().trim().to_string()),
            (None, Some(line)) => call
                .result
                .lines()
                .nth(line.checked_sub(1)?)
                .map(|l| l.trim().to_string()),
            (None, None) => None,
        })
        .filter(|value| !value.is_empty())
        .collect()
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

/// A decimal number written plainly. `str::parse::<f64>` alone would also read "NaN",
/// "inf" or "Infinity", which are words here (Nan is a city).
fn plain_number(text: &str) -> Option<f64> {
    static PLAIN: OnceLock<Regex> = OnceLock::new();
    let plain = PLAIN.get_or_init(|| {
        Regex::new(r"^[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$").expect("valid number pattern")
    });
    let text = text.trim();
    plain.is_match(text).then(|| text.parse().ok()).flatten()
}

/// Lowercases, drops apostrophes (so "d'Ivoire" = "dIvoire"), turns other punctuation and
/// whitespace runs into single spaces.
pub fn fold_text(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(ch, '\'' | '’' | '‘' | '`') {
            continue;
        }
        if ch.is_alphanumeric() {
            folded.extend(ch.to_lowercase());
        } else if !folded.ends_with(' ') {
            folded.push(' ');
        }
    }
    folded.trim().to_string()
}

/// Plain substring test, or with folding a whole-word test on folded text.
fn contains(haystack: &str, needle: &str, fold: bool) -> bool {
    if fold {
        let needle = fold_text(needle);
        !needle.is_empty() && format!(" {} ", fold_text(haystack)).contains(&format!(" {needle} "))
    } else {
        !needle.is_empty() && haystack.contains(needle)
    }
}

/// A number as written: its value and how many decimals were written.
#[derive(Debug, Clone, Copy, PartialEq)]
struct WrittenNumber {
    value: f64,
    decimals: usize,
}

fn number_regex() -> &'static Regex {
    static NUMBER: OnceLock<Regex> = OnceLock::new();
    NUMBER.get_or_init(|| Regex::new(r"\d+(?:\.\d+)?").expect("valid number pattern"))
}

/// Numbers in the text with their sign. A minus counts only when it is not a range dash
/// (i.e. not directly after a digit or letter: "10-15" is two positive numbers).
fn numbers_in(text: &str) -> Vec<(WrittenNumber, usize)> {
    number_regex()
        .find_iter(text)
        .filter(|m| {
            // Skip digits glued to letters ("H2O", "mp3"): they are names, not quantities.
            !text[..m.start()]
                .chars()
                .next_back()
                .is_some_and(char::is_alphabetic)
        })
        .filter_map(|m| {
            let before: Vec<char> = text[..m.start()].chars().rev().take(2).collect();
            let negative = matches!(before.first(), Some('-' | '−'))
                && !before.get(1).is_some_and(|c| c.is_alphanumeric());
            let magnitude: f64 = m.as_str().parse().ok()?;
            let decimals = m.as_str().split_once('.').map_or(0, |(_, frac)| frac.len());
            let value = if negative { -magnitude } else { magnitude };
            Some((WrittenNumber { value, decimals }, m.end()))
        })
        .collect()
}

fn followed_by_unit(text: &str, end: usize, units: &[String]) -> bool {
    let rest = text[end..].trim_start().to_lowercase();
    units
        .iter()
        .any(|unit| rest.starts_with(&unit.to_lowercase()))
}

fn numbers_supported(
    reply: &str,
    units: Option<&[String]>,
    allow_rounding: bool,
    prompt_text: &str,
    transcript: &Transcript,
) -> bool {
    let mut sources: Vec<WrittenNumber> = numbers_in(prompt_text)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for call in transcript.calls() {
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

fn round_to(value: f64, decimals: usize) -> f64 {
    let scale = 10f64.powi(decimals as i32);
    (value * scale).round() / scale
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
                law.check,
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
mod tests {
    use super::*;
    use crate::harness::backend::{FinishReason, GenMetrics};
    use crate::harness::transcript::{Round, RunMetrics, StopReason};
    use serde_json::json;

    fn call(name: &str, arguments: Value, result: &str) -> CallRecord {
        CallRecord {
            name: name.into(),
            raw_arguments: arguments.clone(),
            arguments,
            repairs: vec![],
            result: result.into(),
            is_error: false,
            truncated_chars: 0,
            meta: Value::Null,
        }
    }

    fn transcript(calls: Vec<CallRecord>, reply: &str) -> Transcript {
        Transcript {
            rounds: vec![Round {
                raw: String::new(),
                finish: FinishReason::Eos,
                metrics: GenMetrics::default(),
                calls,
                prose: reply.into(),
                repairs: vec![],
                problems: vec![],
                reask: None,
            }],
            reply: reply.into(),
            stop: StopReason::Answered,
            loaded_skills: vec![],
            metrics: RunMetrics::default(),
        }
    }

    fn laws(toml_text: &str) -> Vec<Law> {
        #[derive(Deserialize)]
        struct Pack {
            laws: Vec<Law>,
        }
        toml::from_str::<Pack>(toml_text).expect("laws parse").laws
    }

    fn sample(value: Value) -> Map<String, Value> {
        value.as_object().expect("sample is an object").clone()
    }

    fn weather_transcript(location: &str, reply: &str) -> Transcript {
        transcript(
            vec![call(
                "weather_lookup",
                json!({ "location": location }),
                "Paris, France\n21.6°C, light rain\nhumidity 80%",
            )],
            reply,
        )
    }

    #[test]
    fn parses_the_documented_toml_shape() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "calls-weather-with-place-as-written"
            kind = "argument_equals_field"
            tool = "weather_lookup"
            argument = "location"
            field = "location"
            fold = true
            categories = ["plain_city", "city_country"]
            "#,
        );
        assert_eq!(parsed[0].name, "calls-weather-with-place-as-written");
        assert_eq!(
            parsed[0].categories,
            Some(vec!["plain_city".to_string(), "city_country".to_string()])
        );
        assert_eq!(
            parsed[0].check,
            Check::ArgumentEqualsField {
                tool: "weather_lookup".into(),
                argument: "location".into(),
                field: "location".into(),
                fold: true,
                calls: CallQuantifier::Any,
            }
        );
        assert_eq!(validate(&parsed), Ok(()));
    }

    #[test]
    fn a_misspelt_key_is_refused_with_the_law_name() {
        #[derive(Debug, Deserialize)]
        struct Pack {
            #[allow(dead_code)]
            laws: Vec<Law>,
        }
        let error = toml::from_str::<Pack>(
            r#"
            [[laws]]
            name = "mentions-city"
            kind = "reply_contains"
            text = "Paris"
            fodl = true
            "#,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("mentions-city"), "{error}");
        assert!(error.contains("fodl"), "{error}");
    }

    #[test]
    fn validate_refuses_laws_that_cannot_fail() {
        let cases = [
            (
                "kind = \"reply_matches\"\npattern = \".*\"",
                "matches any text",
            ),
            (
                "kind = \"reply_matches\"\npattern = \"^\"",
                "matches any text",
            ),
            (
                "kind = \"reply_matches\"\npattern = \"(?s).*\"",
                "matches any text",
            ),
            (
                "kind = \"reply_not_matches\"\npattern = \"a|\"",
                "matches any text",
            ),
            (
                "kind = \"argument_matches\"\ntool = \"t\"\nargument = \"a\"\npattern = \"\"",
                "empty pattern",
            ),
            ("kind = \"reply_contains\"\ntext = \"\"", "empty"),
            (
                "kind = \"reply_contains\"\ntext = \"?!\"\nfold = true",
                "empty",
            ),
            (
                "kind = \"reply_contains\"\ntext = \"a\"\nfield = \"b\"",
                "exactly one",
            ),
            ("kind = \"call_count\"\nmin = 0", "any count passes"),
            ("kind = \"call_count\"", "any count passes"),
            ("kind = \"call_count\"\nmin = 3\nmax = 1", "exceeds"),
            (
                "kind = \"tool_called\"\ntool = \"t\"\ncategories = []",
                "applies nowhere",
            ),
            (
                "kind = \"stop_reason_is\"\nreason = \"finished\"",
                "unknown stop reason",
            ),
            (
                "kind = \"reply_mentions_tool_value\"\nfrom_result_line = 0",
                "counts from 1",
            ),
            (
                "kind = \"reply_mentions_tool_value\"\nfrom_result_pattern = \"temp\"",
                "capture group",
            ),
            (
                "kind = \"no_unsupported_numbers\"\nfollowed_by = []",
                "empty",
            ),
        ];
        for (body, expected) in cases {
            let parsed = laws(&format!("[[laws]]\nname = \"the-law\"\n{body}"));
            let error = validate(&parsed).expect_err(body);
            assert!(error.contains("the-law"), "{body}: {error}");
            assert!(error.contains(expected), "{body}: {error}");
        }
    }

    #[test]
    fn validate_accepts_ordinary_patterns_and_names_duplicates() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "no-apology"
            kind = "reply_not_matches"
            pattern = "(?i)sorry"
            [[laws]]
            name = "no-apology"
            kind = "reply_matches"
            pattern = "\\d+"
            "#,
        );
        let error = validate(&parsed).unwrap_err();
        assert_eq!(error, "law `no-apology`: duplicate name");
    }

    #[test]
    fn argument_equals_field_folds_case_and_punctuation() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "place-as-written"
            kind = "argument_equals_field"
            tool = "weather_lookup"
            argument = "location"
            field = "location"
            fold = true
            "#,
        );
        let city = sample(json!({ "location": "Saint-Denis, Réunion" }));
        let good = weather_transcript("saint denis  réunion", "ok");
        let bad = weather_transcript("Saint-Denis", "ok");
        assert!(judge(&parsed, "plain_city", &city, "", &good).passed);
        let judgement = judge(&parsed, "plain_city", &city, "", &bad);
        assert_eq!(judgement.failed, vec!["place-as-written".to_string()]);
        assert_eq!(judgement.applied, 1);
    }

    #[test]
    fn scope_keys_select_the_samples_a_law_applies_to() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "no-tools"
            kind = "tool_not_called"
            categories = ["chitchat", "refusal"]
            except_categories = ["refusal"]
            [[laws]]
            name = "uses-place"
            kind = "tool_called"
            tool = "weather_lookup"
            when_field = "location"
            "#,
        );
        let with_place = sample(json!({ "location": "Oslo" }));
        let without_place = sample(json!({ "location": null }));
        let called = weather_transcript("Oslo", "ok");
        assert_eq!(
            judge(&parsed, "chitchat", &with_place, "", &called).applied,
            2
        );
        assert_eq!(
            judge(&parsed, "refusal", &with_place, "", &called).applied,
            1
        );
        let judgement = judge(&parsed, "chitchat", &without_place, "", &called);
        assert_eq!(
            (judgement.applied, judgement.failed.clone()),
            (1, vec!["no-tools".to_string()])
        );
    }

    #[test]
    fn call_count_and_tool_not_called_without_a_tool_count_every_call() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "at-most-one-call"
            kind = "call_count"
            max = 1
            [[laws]]
            name = "no-calls"
            kind = "tool_not_called"
            "#,
        );
        let two_calls = transcript(
            vec![call("a", json!({}), ""), call("b", json!({}), "")],
            "done",
        );
        let none = transcript(vec![], "done");
        let empty = Map::new();
        assert_eq!(
            judge(&parsed, "c", &empty, "", &two_calls).failed,
            vec!["at-most-one-call".to_string(), "no-calls".to_string()]
        );
        assert!(judge(&parsed, "c", &empty, "", &none).passed);
    }

    #[test]
    fn every_quantifier_needs_all_calls_to_match() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "celsius-always"
            kind = "argument_equals"
            tool = "weather_lookup"
            argument = "unit"
            value = "celsius"
            calls = "every"
            "#,
        );
        let mixed = transcript(
            vec![
                call("weather_lookup", json!({"unit": "celsius"}), ""),
                call("weather_lookup", json!({"unit": "fahrenheit"}), ""),
            ],
            "",
        );
        let empty = Map::new();
        assert!(!judge(&parsed, "c", &empty, "", &mixed).passed);
        assert!(!judge(&parsed, "c", &empty, "", &transcript(vec![], "")).passed);
    }

    #[test]
    fn argument_equals_compares_numbers_by_value() {
        let parsed = laws(
            "[[laws]]\nname = \"days\"\nkind = \"argument_equals\"\ntool = \"forecast\"\nargument = \"days\"\nvalue = 3",
        );
        let empty = Map::new();
        let as_float = transcript(vec![call("forecast", json!({"days": 3.0}), "")], "");
        let as_text = transcript(vec![call("forecast", json!({"days": "3"}), "")], "");
        let wrong = transcript(vec![call("forecast", json!({"days": 4}), "")], "");
        assert!(judge(&parsed, "c", &empty, "", &as_float).passed);
        assert!(judge(&parsed, "c", &empty, "", &as_text).passed);
        assert!(!judge(&parsed, "c", &empty, "", &wrong).passed);
    }

    #[test]
    fn words_that_parse_as_floats_compare_as_text() {
        let parsed = laws(
            "[[laws]]\nname = \"place\"\nkind = \"argument_equals_field\"\ntool = \"weather_lookup\"\nargument = \"location\"\nfield = \"location\"",
        );
        let nan = sample(json!({ "location": "Nan" }));
        let inf = sample(json!({ "location": "inf" }));
        let t = weather_transcript("Nan", "ok");
        assert!(judge(&parsed, "c", &nan, "", &t).passed);
        assert!(
            !judge(
                &parsed,
                "c",
                &inf,
                "",
                &weather_transcript("infinity", "ok")
            )
            .passed
        );
    }

    #[test]
    fn reply_laws_read_text_fields_and_patterns() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "names-city"
            kind = "reply_contains"
            field = "location"
            fold = true
            [[laws]]
            name = "gives-celsius"
            kind = "reply_matches"
            pattern = "\\d+(\\.\\d+)?\\s*°C"
            [[laws]]
            name = "no-apology"
            kind = "reply_not_matches"
            pattern = "(?i)sorry"
            "#,
        );
        let paris = sample(json!({ "location": "PARIS" }));
        let good = weather_transcript("Paris", "In Paris it is 21.6 °C.");
        let bad = weather_transcript("Paris", "Sorry, Parisians: 21.6 degrees.");
        assert!(judge(&parsed, "c", &paris, "", &good).passed);
        // Folded containment is whole-word: "Parisians" does not name Paris.
        assert_eq!(
            judge(&parsed, "c", &paris, "", &bad).failed,
            vec!["names-city", "gives-celsius", "no-apology"]
        );
    }

    #[test]
    fn a_missing_sample_field_fails_the_law_and_is_reported_by_check_sample() {
        let parsed = laws(
            "[[laws]]\nname = \"names-city\"\nkind = \"reply_contains\"\nfield = \"location\"",
        );
        let empty = Map::new();
        let t = weather_transcript("Paris", "Paris");
        assert!(!judge(&parsed, "c", &empty, "", &t).passed);
        let error = check_sample(&parsed, "c", &empty).unwrap_err();
        assert!(
            error.contains("names-city") && error.contains("location"),
            "{error}"
        );
        assert_eq!(
            check_sample(&parsed, "c", &sample(json!({"location": "Paris"}))),
            Ok(())
        );
    }

    #[test]
    fn reply_mentions_tool_value_by_line_and_by_capture() {
        let parsed = laws(
            r#"
            [[laws]]
            name = "echoes-first-line"
            kind = "reply_mentions_tool_value"
            tool = "weather_lookup"
            from_result_line = 1
            fold = true
            [[laws]]
            name = "echoes-temperature"
            kind = "reply_mentions_tool_value"
            from_result_pattern = "(-?\\d+(?:\\.\\d+)?)°C"
            "#,
        );
        let empty = Map::new();
        let good = weather_transcript("Paris", "Paris (France): 21.6 degrees, light rain.");
        let no_temperature = weather_transcript("Paris", "Paris, France: mild.");
        let no_call = transcript(vec![], "Paris, France: 21.6");
        assert!(judge(&parsed, "c", &empty, "", &good).passed);
        assert_eq!(
            judge(&parsed, "c", &empty, "", &no_temperature).failed,
            vec!["echoes-temperature"]
        );
        assert_eq!(judge(&parsed, "c", &empty, "", &no_call).failed.len(), 2);
    }

    #[test]
    fn no_unsupported_numbers_checks_reply_numbers_against_results_and_prompt() {
        let all_numbers = laws("[[laws]]\nname = \"grounded\"\nkind = \"no_unsupported_numbers\"");
        let degrees_rounded = laws(
            "[[laws]]\nname = \"grounded\"\nkind = \"no_unsupported_numbers\"\nfollowed_by = [\"°\", \"degrees\"]\nallow_rounding = true",
        );
        let empty = Map::new();
        let prompt = "Weather in Paris for the next 3 days?";
        let verdict = |laws: &[Law], reply: &str| {
            judge(
                laws,
                "c",
                &empty,
                prompt,
                &weather_transcript("Paris", reply),
            )
            .passed
        };

        assert!(verdict(&all_numbers, "Next 3 days: 21.6°C, humidity 80%."));
        assert!(!verdict(&all_numbers, "Next 3 days: 22°C."));
        assert!(!verdict(&all_numbers, "It is -21.6°C."), "the sign matters");
        assert!(
            verdict(&degrees_rounded, "About 22 degrees, 5 km/h wind."),
            "rounded, wind unchecked"
        );
        assert!(!verdict(&degrees_rounded, "About 25°."));
        assert!(
            verdict(&all_numbers, "Ranges of 21.6-80 happen."),
            "a range dash is not a minus"
        );
    }

    #[test]
    fn stop_reason_and_gaps() {
        let parsed =
            laws("[[laws]]\nname = \"answers\"\nkind = \"stop_reason_is\"\nreason = \"answered\"");
        let empty = Map::new();
        let mut t = weather_transcript("Paris", "ok");
        assert!(judge(&parsed, "c", &empty, "", &t).passed);
        assert!(!has_fixture_gap(&t));
        t.stop = StopReason::RoundBudget;
        t.rounds[0].calls[0].meta = json!({ "gap": true });
        assert!(!judge(&parsed, "c", &empty, "", &t).passed);
        assert!(has_fixture_gap(&t));
    }

    #[test]
    fn a_failure_fixed_in_the_first_round_outlives_a_gap() {
        let parsed = laws(
            "[[laws]]\nname = \"as-written\"\nkind = \"argument_equals_field\"\ntool = \"weather_lookup\"\nargument = \"location\"\nfield = \"location\"\n\n[[laws]]\nname = \"mentions\"\nkind = \"reply_contains\"\ntext = \"Paris\"",
        );
        let fields = sample(json!({"location": "Paris"}));
        // Asked for the wrong place before any answer: that failure is the model's, gap or not.
        let mut wrong = weather_transcript("Lyon", "no idea");
        wrong.rounds[0].calls[0].meta = json!({"gap": true});
        let j = judge(&parsed, "c", &fields, "", &wrong);
        assert!(failed_before_any_answer(
            &parsed, &j, "c", &fields, "", &wrong
        ));
        // Asked right, failed only in the reply: the missing answer may be why.
        let mut right = weather_transcript("Paris", "no idea");
        right.rounds[0].calls[0].meta = json!({"gap": true});
        let j = judge(&parsed, "c", &fields, "", &right);
        assert!(!j.passed);
        assert!(!failed_before_any_answer(
            &parsed, &j, "c", &fields, "", &right
        ));
    }

    #[test]
    fn laws_round_trip_through_serde() {
        let parsed = laws(
            "[[laws]]\nname = \"n\"\nkind = \"call_count\"\ntool = \"t\"\nmin = 1\nexcept_categories = [\"x\"]",
        );
        let json = serde_json::to_value(&parsed[0]).unwrap();
        assert_eq!(json["kind"], "call_count");
        assert_eq!(serde_json::from_value::<Law>(json).unwrap(), parsed[0]);
    }
}
