//! What one run of the loop leaves behind: serializable, so journals can store it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::backend::{FinishReason, GenMetrics};
use super::conversation::UserTurn;
use super::toolcall::Repair;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum StopReason {
    /// The model replied without a tool call.
    Answered,
    /// The round budget ran out while the model still called tools.
    RoundBudget,
    /// The generated-token budget ran out.
    TokenBudget,
    /// The backend or the loop failed.
    Error(String),
}

impl StopReason {
    pub fn name(&self) -> &'static str {
        match self {
            StopReason::Answered => "answered",
            StopReason::RoundBudget => "round_budget",
            StopReason::TokenBudget => "token_budget",
            StopReason::Error(_) => "error",
        }
    }
}

/// One executed (or refused) tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub name: String,
    /// Arguments as the model wrote them (after parsing).
    pub raw_arguments: Value,
    /// Arguments after coercion to the schema; equal to `raw_arguments` when nothing changed.
    pub arguments: Value,
    pub repairs: Vec<Repair>,
    /// The text the model was shown as the result.
    pub result: String,
    pub is_error: bool,
    /// Characters cut from the result by the output budget.
    pub truncated_chars: usize,
    /// Opaque facts the executor attached (a fixture gap, say). The harness never reads it.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub meta: Value,
    /// For a call to a write tool: whether the user allowed it (a refused one did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
}

impl CallRecord {
    /// A call as the model made it, before coercion and before any answer.
    pub fn unanswered(name: &str, arguments: &serde_json::Map<String, Value>) -> CallRecord {
        let raw_arguments = Value::Object(arguments.clone());
        CallRecord {
            name: name.to_string(),
            raw_arguments: raw_arguments.clone(),
            arguments: raw_arguments,
            repairs: Vec::new(),
            result: String::new(),
            is_error: false,
            truncated_chars: 0,
            meta: Value::Null,
            approved: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The model's text, exactly as generated.
    pub raw: String,
    pub finish: FinishReason,
    pub metrics: GenMetrics,
    pub calls: Vec<CallRecord>,
    /// Text of this round that is not a call.
    pub prose: String,
    /// Repairs applied while parsing this round's text (fences, closers).
    pub repairs: Vec<Repair>,
    /// Blocks that looked like calls but were not executed (ambiguous, unclosed).
    pub problems: Vec<String>,
    /// The corrective message sent after this round, when the model described a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reask: Option<String>,
    /// What the scripted user said after this round, which answered without a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserTurn>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    pub rounds: u32,
    pub prompt_tokens: u32,
    pub generated_tokens: u32,
    pub prefill_secs: f64,
    pub decode_secs: f64,
    /// Time to the first token of the first round.
    pub ttft_secs: f64,
    pub tool_secs: f64,
    pub wall_secs: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    pub rounds: Vec<Round>,
    /// The answer the user sees: the prose of the last round.
    pub reply: String,
    pub stop: StopReason,
    pub loaded_skills: Vec<String>,
    pub metrics: RunMetrics,
}

impl Transcript {
    /// Every call of every round, in order.
    pub fn calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.rounds.iter().flat_map(|r| r.calls.iter())
    }

    /// What the scripted user said, in order.
    pub fn user_turns(&self) -> impl Iterator<Item = &UserTurn> {
        self.rounds.iter().filter_map(|r| r.user.as_ref())
    }
}

/// A transcript as a person reads it: each round's text, calls and results, then the answer.
pub fn render_readable(t: &Transcript) -> String {
    let mut out = String::new();
    for (i, round) in t.rounds.iter().enumerate() {
        out.push_str(&format!(
            "── round {} ({} tokens) ──\n",
            i + 1,
            round.metrics.generated_tokens
        ));
        out.push_str(round.raw.trim());
        out.push('\n');
        for repair in &round.repairs {
            out.push_str(&format!("  [repair] {}\n", repair.detail));
        }
        for problem in &round.problems {
            out.push_str(&format!("  [not executed] {problem}\n"));
        }
        for call in &round.calls {
            out.push_str(&format!("  → {}({})\n", call.name, call.arguments));
            for repair in &call.repairs {
                out.push_str(&format!("    [repair] {}\n", repair.detail));
            }
            if call.approved == Some(false) {
                out.push_str("    [not approved]\n");
            }
            let marker = if call.is_error { "error" } else { "result" };
            for line in call.result.lines() {
                out.push_str(&format!("    {marker}: {line}\n"));
            }
        }
        if let Some(reask) = &round.reask {
            out.push_str(&format!("  [re-asked] {reask}\n"));
        }
        if let Some(user) = &round.user {
            out.push_str(&format!(
                "── user (to a{} {}) ──\n{}\n",
                if user.on.name().starts_with('a') {
                    "n"
                } else {
                    ""
                },
                user.on.name(),
                user.said.trim()
            ));
        }
    }
    out.push_str(&format!("── stop: {} ──\n", t.stop.name()));
    if let StopReason::Error(e) = &t.stop {
        out.push_str(&format!("error: {e}\n"));
    }
    out.push_str(&format!("reply: {}\n", t.reply));
    let m = &t.metrics;
    out.push_str(&format!(
        "rounds {} · prompt {} tokens · generated {} tokens · first token {:.2} s · decode {:.1} tokens/s · {:.2} s\n",
        m.rounds,
        m.prompt_tokens,
        m.generated_tokens,
        m.ttft_secs,
        super::backend::rate(m.generated_tokens, m.decode_secs),
        m.wall_secs
    ));
    out
}
