//! What a law is: its scope, its kind and the kind's keys, read from `pack.toml`, and the
//! checks that refuse a law that could never fail or never pass. Parsing runs them and compiles
//! the law's check into the `CompiledCheck` the judge runs, so every `Law` is valid and its
//! patterns are compiled once.

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::compiled::{
    CallQuantifier, CompiledCheck, CountedResults, Needle, ReportsResult, ResultValue, ToolArgument,
};
use super::pattern::{compile_pattern, Vacuous};
use super::text::fold_text;

/// One named expectation, with the samples it applies to.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// What the skill exists for (a safeguard it states, the call it teaches), not a side
    /// effect: a wording's headline leads with these laws.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub purpose: bool,
    /// As written; private so that it cannot drift from `compiled`.
    #[serde(flatten)]
    check: Check,
    #[serde(skip)]
    compiled: CompiledCheck,
}

impl Law {
    /// The check as the pack writes it.
    pub fn check(&self) -> &Check {
        &self.check
    }

    pub(super) fn compiled(&self) -> &CompiledCheck {
        &self.compiled
    }
}

/// `compiled` follows from `check`, so it takes no part.
impl PartialEq for Law {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.categories == other.categories
            && self.except_categories == other.except_categories
            && self.when_field == other.when_field
            && self.purpose == other.purpose
            && self.check == other.check
    }
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
    /// The reply matches `pattern` and, when `unless` is given, does not match `unless`.
    ReplyMatches {
        pattern: String,
        unless: Option<String>,
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
    /// Every temperature in the reply (see `text`) is supported by a temperature of a counted
    /// result of `tool` (or any tool): a non-error result that matches `success_pattern` when
    /// one is given. The reply's unit must agree where both name one; with `allow_rounding` a
    /// source rounded to the reply's decimals also counts.
    NoUnsupportedTemperatures {
        tool: Option<String>,
        success_pattern: Option<String>,
        #[serde(default)]
        allow_rounding: bool,
    },
    /// The reply holds no temperature.
    ReplyHasNoTemperature {},
    /// The reply gives at least one temperature in the unit the sample's `field` names
    /// ("C", "F", "celsius", "fahrenheit"); a bare "degrees" names no unit.
    ReplyTemperatureInFieldUnit {
        field: String,
    },
    /// Some counted result of `tool` (as for `no_unsupported_temperatures`) exists, and the
    /// reply reports one of its facts: a temperature the result holds (unit and rounding as
    /// there), or a phrase captured (group 1) by one of the `facts` patterns, applied to each
    /// line of the result. A phrase is reported when the reply names it whole or names one of
    /// its words outside `weak_words` (plural, "-y" and "-ing" forms alike); a weak word the
    /// reply puts right before that word must be in the phrase too ("partly cloudy" does not
    /// report "Cloudy"). With `lines_field`, only the result lines that name one of that sample
    /// field's values count. A reply matching `unless` reports nothing (e.g. one that only
    /// announces a lookup still to come).
    ReplyReportsResult {
        tool: Option<String>,
        success_pattern: Option<String>,
        unless: Option<String>,
        #[serde(default)]
        facts: Vec<String>,
        #[serde(default)]
        weak_words: Vec<String>,
        lines_field: Option<String>,
        #[serde(default)]
        allow_rounding: bool,
    },
    /// The run stopped for this reason, named as in `StopReason::name()`.
    StopReasonIs {
        reason: String,
    },
    /// Conversations (`exchange`): the model asked the user before its first call to `tool`
    /// (or to any tool); with no such call, it asked at all.
    AsksBeforeCall {
        tool: Option<String>,
    },
    /// The model asked for approval, and the user replied, before its first call to `tool`
    /// (a refused call counts); with no such call, it asked for approval at all.
    ConfirmsBeforeCall {
        tool: String,
    },
    /// No call to a write tool was refused for want of the user's approval.
    NoUnapprovedWrite {},
    /// A call to `tool` follows a call to `after` that did not fail.
    CallsAfter {
        tool: String,
        after: String,
    },
    /// A call to `tool` made after the user said the sample's `field` passes it as `argument`.
    ArgumentFromUser {
        tool: String,
        argument: String,
        field: String,
        #[serde(default)]
        fold: bool,
    },
    /// As `reply_mentions_tool_value`, read from the last non-error result of `tool` only.
    ReplyMentionsLastResult {
        tool: Option<String>,
        from_result_line: Option<usize>,
        from_result_pattern: Option<String>,
        #[serde(default)]
        fold: bool,
    },
}

impl TryFrom<Map<String, Value>> for Law {
    type Error = String;

    /// Scope keys are taken out here so that the kind's own keys can be checked strictly. A
    /// law that could never fail or never pass is refused, its message naming the law.
    fn try_from(mut table: Map<String, Value>) -> Result<Self, Self::Error> {
        let name = match table.remove("name") {
            Some(Value::String(name)) => name,
            Some(other) => return Err(format!("law name must be a string, got {other}")),
            None => return Err("law without a `name`".to_string()),
        };
        let in_law = |e: serde_json::Error| format!("law `{name}`: {e}");
        let categories: Option<Vec<String>> = table
            .remove("categories")
            .map(serde_json::from_value)
            .transpose()
            .map_err(in_law)?;
        let except_categories: Vec<String> = table
            .remove("except_categories")
            .map(serde_json::from_value)
            .transpose()
            .map_err(in_law)?
            .unwrap_or_default();
        let when_field: Option<String> = table
            .remove("when_field")
            .map(serde_json::from_value)
            .transpose()
            .map_err(in_law)?;
        let purpose = match table.remove("purpose") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(other) => {
                return Err(format!(
                    "law `{name}`: field `purpose` must be true or false, not {other}"
                ))
            }
        };
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
        let compiled = validate_scope(
            &name,
            categories.as_deref(),
            &except_categories,
            when_field.as_deref(),
        )
        .and_then(|()| compile(&check))
        .map_err(|problem| format!("law `{name}`: {problem}"))?;
        Ok(Law {
            name,
            categories,
            except_categories,
            when_field,
            purpose,
            check,
            compiled,
        })
    }
}

/// Every `kind` a law may have, as written in `pack.toml`.
pub const LAW_KINDS: [&str; 22] = [
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
    "no_unsupported_temperatures",
    "reply_has_no_temperature",
    "reply_temperature_in_field_unit",
    "reply_reports_result",
    "stop_reason_is",
    "asks_before_call",
    "confirms_before_call",
    "no_unapproved_write",
    "calls_after",
    "argument_from_user",
    "reply_mentions_last_result",
];

impl Check {
    /// The tool and argument the law reads, if it reads one.
    pub fn argument(&self) -> Option<(&str, &str)> {
        match self {
            Check::ArgumentEqualsField { tool, argument, .. }
            | Check::ArgumentEquals { tool, argument, .. }
            | Check::ArgumentMatches { tool, argument, .. } => Some((tool, argument)),
            _ => None,
        }
    }

    /// The tool the law names, if it names one.
    pub fn tool(&self) -> Option<&str> {
        match self {
            Check::ToolCalled { tool }
            | Check::ConfirmsBeforeCall { tool }
            | Check::CallsAfter { tool, .. }
            | Check::ArgumentFromUser { tool, .. }
            | Check::ArgumentEqualsField { tool, .. }
            | Check::ArgumentEquals { tool, .. }
            | Check::ArgumentMatches { tool, .. } => Some(tool),
            Check::ToolNotCalled { tool }
            | Check::CallCount { tool, .. }
            | Check::ReplyMentionsToolValue { tool, .. }
            | Check::AsksBeforeCall { tool }
            | Check::ReplyMentionsLastResult { tool, .. }
            | Check::NoUnsupportedTemperatures { tool, .. }
            | Check::ReplyReportsResult { tool, .. } => tool.as_deref(),
            Check::ReplyContains { .. }
            | Check::ReplyMatches { .. }
            | Check::ReplyNotMatches { .. }
            | Check::NoUnsupportedNumbers { .. }
            | Check::ReplyHasNoTemperature {}
            | Check::ReplyTemperatureInFieldUnit { .. }
            | Check::StopReasonIs { .. }
            | Check::NoUnapprovedWrite {} => None,
        }
    }
}

const STOP_REASON_NAMES: [&str; 4] = ["answered", "round_budget", "token_budget", "error"];

fn validate_scope(
    name: &str,
    categories: Option<&[String]>,
    except_categories: &[String],
    when_field: Option<&str>,
) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("empty name".into());
    }
    if let Some(categories) = categories {
        if categories.is_empty() {
            return Err("`categories` is empty, so the law applies nowhere".into());
        }
        if categories.iter().all(|c| except_categories.contains(c)) {
            return Err("every category in `categories` is also excepted".into());
        }
    }
    if when_field.is_some_and(|f| f.trim().is_empty()) {
        return Err("empty `when_field`".into());
    }
    Ok(())
}

/// Refuses a check that cannot fail (or cannot pass), else compiles it: one function per kind.
fn compile(check: &Check) -> Result<CompiledCheck, String> {
    match check {
        Check::ToolCalled { tool } => compile_tool_called(tool),
        Check::ToolNotCalled { tool } => compile_tool_not_called(tool),
        Check::CallCount { tool, min, max } => compile_call_count(tool, *min, *max),
        Check::ArgumentEqualsField {
            tool,
            argument,
            field,
            fold,
            calls,
        } => compile_argument_equals_field(tool_argument(tool, argument, *calls)?, field, *fold),
        Check::ArgumentEquals {
            tool,
            argument,
            value,
            fold,
            calls,
        } => compile_argument_equals(tool_argument(tool, argument, *calls)?, value, *fold),
        Check::ArgumentMatches {
            tool,
            argument,
            pattern,
            calls,
        } => compile_argument_matches(tool_argument(tool, argument, *calls)?, pattern),
        Check::ReplyContains { text, field, fold } => compile_reply_contains(text, field, *fold),
        Check::ReplyMatches { pattern, unless } => compile_reply_matches(pattern, unless),
        Check::ReplyNotMatches { pattern } => compile_reply_not_matches(pattern),
        Check::ReplyMentionsToolValue {
            tool,
            from_result_line,
            from_result_pattern,
            fold,
        } => compile_reply_mentions_tool_value(tool, *from_result_line, from_result_pattern, *fold),
        Check::NoUnsupportedNumbers {
            followed_by,
            allow_rounding,
        } => compile_no_unsupported_numbers(followed_by, *allow_rounding),
        Check::NoUnsupportedTemperatures {
            tool,
            success_pattern,
            allow_rounding,
        } => compile_no_unsupported_temperatures(tool, success_pattern, *allow_rounding),
        Check::ReplyHasNoTemperature {} => Ok(CompiledCheck::reply_has_no_temperature()),
        Check::ReplyTemperatureInFieldUnit { field } => {
            compile_reply_temperature_in_field_unit(field)
        }
        Check::ReplyReportsResult {
            tool,
            success_pattern,
            unless,
            facts,
            weak_words,
            lines_field,
            allow_rounding,
        } => compile_reply_reports_result(
            counted_results(tool, success_pattern)?,
            unless,
            facts,
            weak_words,
            lines_field,
            *allow_rounding,
        ),
        Check::StopReasonIs { reason } => compile_stop_reason_is(reason),
        Check::AsksBeforeCall { tool } => {
            optional_tool(tool)?;
            Ok(CompiledCheck::asks_before_call(tool.clone()))
        }
        Check::ConfirmsBeforeCall { tool } => {
            non_empty("tool", tool)?;
            Ok(CompiledCheck::confirms_before_call(tool.clone()))
        }
        Check::NoUnapprovedWrite {} => Ok(CompiledCheck::no_unapproved_write()),
        Check::CallsAfter { tool, after } => {
            non_empty("tool", tool)?;
            non_empty("after", after)?;
            if tool == after {
                return Err(
                    "`tool` and `after` name one tool; name the call that should follow".into(),
                );
            }
            Ok(CompiledCheck::calls_after(tool.clone(), after.clone()))
        }
        Check::ArgumentFromUser {
            tool,
            argument,
            field,
            fold,
        } => {
            non_empty("tool", tool)?;
            non_empty("argument", argument)?;
            non_empty("field", field)?;
            Ok(CompiledCheck::argument_from_user(
                tool.clone(),
                argument.clone(),
                field.clone(),
                *fold,
            ))
        }
        Check::ReplyMentionsLastResult {
            tool,
            from_result_line,
            from_result_pattern,
            fold,
        } => {
            optional_tool(tool)?;
            Ok(CompiledCheck::reply_mentions_last_result(
                tool.clone(),
                result_value(*from_result_line, from_result_pattern)?,
                *fold,
            ))
        }
    }
}

fn compile_tool_called(tool: &str) -> Result<CompiledCheck, String> {
    non_empty("tool", tool)?;
    Ok(CompiledCheck::tool_called(tool.to_string()))
}

fn compile_tool_not_called(tool: &Option<String>) -> Result<CompiledCheck, String> {
    optional_tool(tool)?;
    Ok(CompiledCheck::tool_not_called(tool.clone()))
}

fn compile_call_count(
    tool: &Option<String>,
    min: Option<u32>,
    max: Option<u32>,
) -> Result<CompiledCheck, String> {
    optional_tool(tool)?;
    validate_count_bounds(min, max)?;
    Ok(CompiledCheck::call_count(tool.clone(), min, max))
}

fn compile_argument_equals_field(
    argument: ToolArgument,
    field: &str,
    fold: bool,
) -> Result<CompiledCheck, String> {
    non_empty("field", field)?;
    Ok(CompiledCheck::argument_equals_field(
        argument,
        field.to_string(),
        fold,
    ))
}

fn compile_argument_equals(
    argument: ToolArgument,
    value: &Value,
    fold: bool,
) -> Result<CompiledCheck, String> {
    if value.is_null() {
        return Err("`value` is null".into());
    }
    Ok(CompiledCheck::argument_equals(
        argument,
        value.clone(),
        fold,
    ))
}

fn compile_argument_matches(
    argument: ToolArgument,
    pattern: &str,
) -> Result<CompiledCheck, String> {
    Ok(CompiledCheck::argument_matches(
        argument,
        compile_pattern("pattern", pattern, 0, Vacuous::Both)?,
    ))
}

fn compile_reply_contains(
    text: &Option<String>,
    field: &Option<String>,
    fold: bool,
) -> Result<CompiledCheck, String> {
    Ok(CompiledCheck::reply_contains(
        needle(text, field, fold)?,
        fold,
    ))
}

fn compile_reply_matches(pattern: &str, unless: &Option<String>) -> Result<CompiledCheck, String> {
    Ok(CompiledCheck::reply_matches(
        compile_pattern("pattern", pattern, 0, Vacuous::Both)?,
        compile_unless(unless)?,
    ))
}

fn compile_reply_not_matches(pattern: &str) -> Result<CompiledCheck, String> {
    Ok(CompiledCheck::reply_not_matches(compile_pattern(
        "pattern",
        pattern,
        0,
        Vacuous::Both,
    )?))
}

fn compile_reply_mentions_tool_value(
    tool: &Option<String>,
    from_result_line: Option<usize>,
    from_result_pattern: &Option<String>,
    fold: bool,
) -> Result<CompiledCheck, String> {
    optional_tool(tool)?;
    Ok(CompiledCheck::reply_mentions_tool_value(
        tool.clone(),
        result_value(from_result_line, from_result_pattern)?,
        fold,
    ))
}

fn compile_no_unsupported_numbers(
    followed_by: &Option<Vec<String>>,
    allow_rounding: bool,
) -> Result<CompiledCheck, String> {
    validate_followed_by(followed_by)?;
    Ok(CompiledCheck::no_unsupported_numbers(
        followed_by.clone(),
        allow_rounding,
    ))
}

fn compile_no_unsupported_temperatures(
    tool: &Option<String>,
    success_pattern: &Option<String>,
    allow_rounding: bool,
) -> Result<CompiledCheck, String> {
    Ok(CompiledCheck::no_unsupported_temperatures(
        counted_results(tool, success_pattern)?,
        allow_rounding,
    ))
}

fn compile_reply_temperature_in_field_unit(field: &str) -> Result<CompiledCheck, String> {
    non_empty("field", field)?;
    Ok(CompiledCheck::reply_temperature_in_field_unit(
        field.to_string(),
    ))
}

fn compile_reply_reports_result(
    results: CountedResults,
    unless: &Option<String>,
    facts: &[String],
    weak_words: &[String],
    lines_field: &Option<String>,
    allow_rounding: bool,
) -> Result<CompiledCheck, String> {
    let report = ReportsResult {
        results,
        unless: compile_unless(unless)?,
        facts: compile_facts(facts)?,
        weak_words: fold_weak_words(weak_words)?,
        lines_field: lines_field.clone(),
        allow_rounding,
    };
    if let Some(field) = lines_field {
        non_empty("lines_field", field)?;
    }
    Ok(CompiledCheck::reply_reports_result(report))
}

fn compile_stop_reason_is(reason: &str) -> Result<CompiledCheck, String> {
    if !STOP_REASON_NAMES.contains(&reason) {
        return Err(format!(
            "unknown stop reason `{reason}`; known: {}",
            STOP_REASON_NAMES.join(", ")
        ));
    }
    Ok(CompiledCheck::stop_reason_is(reason.to_string()))
}

fn validate_count_bounds(min: Option<u32>, max: Option<u32>) -> Result<(), String> {
    // A `max` of u32::MAX bounds nothing: no run makes that many calls.
    match (min, max.filter(|&max| max < u32::MAX)) {
        (None | Some(0), None) => Err("no `max` and no `min` above 0: any count passes".into()),
        (Some(min), Some(max)) if min > max => Err(format!("min {min} exceeds max {max}")),
        _ => Ok(()),
    }
}

fn validate_followed_by(units: &Option<Vec<String>>) -> Result<(), String> {
    match units {
        Some(units) if units.is_empty() => {
            Err("`followed_by` is empty; omit it to check every number".into())
        }
        Some(units) if units.iter().any(|u| u.trim().is_empty()) => {
            Err("`followed_by` holds an empty unit".into())
        }
        _ => Ok(()),
    }
}

/// Each fact captures its phrase in group 1; it may match anywhere, but must match something.
fn compile_facts(facts: &[String]) -> Result<Vec<Regex>, String> {
    facts
        .iter()
        .enumerate()
        .map(|(i, fact)| compile_pattern(&format!("facts[{i}]"), fact, 1, Vacuous::Nothing))
        .collect()
}

fn fold_weak_words(weak_words: &[String]) -> Result<Vec<String>, String> {
    let folded: Vec<String> = weak_words.iter().map(|w| fold_text(w)).collect();
    if folded.iter().any(String::is_empty) {
        return Err("`weak_words` holds an empty word".into());
    }
    Ok(folded)
}

fn tool_argument(
    tool: &str,
    argument: &str,
    calls: CallQuantifier,
) -> Result<ToolArgument, String> {
    non_empty("tool", tool)?;
    non_empty("argument", argument)?;
    Ok(ToolArgument {
        tool: tool.to_string(),
        argument: argument.to_string(),
        calls,
    })
}

fn needle(text: &Option<String>, field: &Option<String>, fold: bool) -> Result<Needle, String> {
    match (text, field) {
        (Some(text), None) => {
            let effective = if fold { fold_text(text) } else { text.clone() };
            if effective.trim().is_empty() {
                return Err("`text` is empty (after folding), so every reply contains it".into());
            }
            Ok(Needle::Text(text.clone()))
        }
        (None, Some(field)) => {
            non_empty("field", field)?;
            Ok(Needle::Field(field.clone()))
        }
        _ => Err("give exactly one of `text` and `field`".into()),
    }
}

fn result_value(line: Option<usize>, pattern: &Option<String>) -> Result<ResultValue, String> {
    match (line, pattern) {
        (Some(0), None) => Err("`from_result_line` counts from 1".into()),
        (Some(line), None) => Ok(ResultValue::Line { index: line - 1 }),
        (None, Some(pattern)) => Ok(ResultValue::Capture(compile_pattern(
            "from_result_pattern",
            pattern,
            1,
            Vacuous::Both,
        )?)),
        _ => Err("give exactly one of `from_result_line` and `from_result_pattern`".into()),
    }
}

fn non_empty(key: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        Err(format!("empty `{key}`"))
    } else {
        Ok(())
    }
}

fn optional_tool(tool: &Option<String>) -> Result<(), String> {
    tool.as_deref().map_or(Ok(()), |t| non_empty("tool", t))
}

/// A filter on results must be able to pass some and refuse others.
fn counted_results(
    tool: &Option<String>,
    success_pattern: &Option<String>,
) -> Result<CountedResults, String> {
    optional_tool(tool)?;
    let success = success_pattern
        .as_deref()
        .map(|pattern| compile_pattern("success_pattern", pattern, 0, Vacuous::Both))
        .transpose()?;
    Ok(CountedResults {
        tool: tool.clone(),
        success,
    })
}

fn compile_unless(unless: &Option<String>) -> Result<Option<Regex>, String> {
    unless
        .as_deref()
        .map(|unless| compile_pattern("unless", unless, 0, Vacuous::Both))
        .transpose()
}
