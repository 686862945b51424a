//! Laws over a whole conversation: what the model asked the scripted user, in what order it
//! called, whether its writes were allowed, and whether its last answer reads the last result.
//! Each check reads the rounds in order; a round that asked carries the user's reply.

use serde_json::Value;

use super::compiled::{CompiledCheck, Evidence};
use super::text::{contains, fold_text};
use super::{field_value, value_text, values_equal};
use crate::harness::transcript::Transcript;

/// The index of the first round with a call to `tool` (or to any tool).
fn first_call_round(transcript: &Transcript, tool: Option<&str>) -> Option<usize> {
    transcript
        .rounds
        .iter()
        .position(|r| r.calls.iter().any(|c| tool.is_none_or(|t| c.name == t)))
}

/// Whether a round before `end` asked the user and was answered, in a way `asked` accepts.
/// With no `end` (no such call), whether the model asked at all: its last reply counts too
/// when it asks, answered or not, since the conversation may end on the question.
fn asked_before(
    transcript: &Transcript,
    end: Option<usize>,
    asked: impl Fn(crate::harness::conversation::Act) -> bool,
) -> bool {
    let answered = |rounds: &[crate::harness::transcript::Round]| {
        rounds
            .iter()
            .any(|r| r.user.as_ref().is_some_and(|u| asked(u.on)))
    };
    match end {
        Some(end) => answered(&transcript.rounds[..end]),
        None => {
            answered(&transcript.rounds)
                || transcript.rounds.last().is_some_and(|last| {
                    last.calls.is_empty()
                        && last.user.is_none()
                        && asked(crate::harness::conversation::classify(&last.prose))
                })
        }
    }
}

impl CompiledCheck {
    pub(super) fn asks_before_call(tool: Option<String>) -> CompiledCheck {
        Self::new(move |on| {
            let first = first_call_round(on.transcript, tool.as_deref());
            asked_before(on.transcript, first, |act| act.asks())
        })
    }

    pub(super) fn confirms_before_call(tool: String) -> CompiledCheck {
        // With no call, it holds only if the model asked for approval at all: a run that never
        // comes near the change has confirmed nothing, and would otherwise pass by doing nothing.
        Self::new(move |on| {
            let first = first_call_round(on.transcript, Some(&tool));
            asked_before(on.transcript, first, |act| {
                act == crate::harness::conversation::Act::Approval
            })
        })
    }

    pub(super) fn no_unapproved_write() -> CompiledCheck {
        Self::new(|on| on.transcript.calls().all(|c| c.approved != Some(false)))
    }

    pub(super) fn calls_after(tool: String, after: String) -> CompiledCheck {
        Self::new(move |on| {
            let mut done = false;
            for call in on.transcript.calls() {
                if done && call.name == tool {
                    return true;
                }
                if call.name == after && !call.is_error {
                    done = true;
                }
            }
            false
        })
    }

    pub(super) fn argument_from_user(
        tool: String,
        argument: String,
        field: String,
        fold: bool,
    ) -> CompiledCheck {
        Self::new(move |on| argument_from_user(on, &tool, &argument, &field, fold))
    }

    pub(super) fn reply_mentions_last_result(
        tool: Option<String>,
        value: super::compiled::ResultValue,
        fold: bool,
    ) -> CompiledCheck {
        Self::new(move |on| {
            let last = on
                .transcript
                .calls()
                .filter(|c| tool.as_deref().is_none_or(|t| c.name == t) && !c.is_error)
                .last();
            last.and_then(|call| value.read(&call.result))
                .is_some_and(|v| contains(&on.transcript.reply, &v, fold))
        })
    }
}

/// A call to `tool`, made after the user said the sample's `field`, whose `argument` is it.
fn argument_from_user(on: &Evidence, tool: &str, argument: &str, field: &str, fold: bool) -> bool {
    let Some(expected) = field_value(on.sample, field) else {
        return false;
    };
    let text = value_text(expected);
    let said = on.transcript.rounds.iter().position(|r| {
        r.user
            .as_ref()
            .is_some_and(|u| fold_text(&u.said).contains(&fold_text(&text)))
    });
    let Some(said) = said else {
        return false;
    };
    on.transcript.rounds[said + 1..]
        .iter()
        .flat_map(|r| r.calls.iter())
        .filter(|c| c.name == tool)
        .any(|c| {
            c.arguments
                .get(argument)
                .filter(|v| !v.is_null())
                .is_some_and(|v: &Value| values_equal(v, expected, fold))
        })
}
