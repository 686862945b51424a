//! The samples a report shows side by side: for each comparison of a run, every (sample,
//! repeat) whose two arms' runs were both scored and came out differently (one passed, the
//! other failed), with what a reader needs of each run: the calls with their arguments and
//! replayed results, the reply, and the laws that failed.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::eval::arm::Arm;
use crate::eval::record::journal::JournalEntry;
use crate::eval::record::RunRecord;
use crate::eval::stats::{Comparison, Summary};
use crate::harness::transcript::StopReason;

/// Pairs shown per comparison; a report beyond that says how many it left out.
pub const PAIRS_SHOWN: usize = 400;

/// One (sample, repeat) whose arms disagree.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    /// `skill_effect` or `wording`.
    pub comparison: String,
    pub category: String,
    pub sample_id: String,
    pub repeat: u32,
    pub seed: u32,
    /// The sample's prompt, when the corpus could be read.
    pub prompt: Option<String>,
    /// The verdict of the pair's category in its comparison (as `Verdict` serializes, with
    /// `inconclusive` for a no-change row whose Δ reached its MDE).
    pub verdict: String,
    /// The treatment passed where the reference failed.
    pub treatment_passed: bool,
    /// Laws that failed on either side.
    pub laws: Vec<String>,
    pub reference: Side,
    pub treatment: Side,
}

/// One arm's run of the pair.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub arm: Arm,
    pub passed: bool,
    pub errored: bool,
    pub applied_laws: Vec<String>,
    pub failed_laws: Vec<String>,
    pub rounds: Vec<ShownRound>,
    pub reply: String,
    /// How the loop ended: `answered`, `round_budget`, `token_budget` or `error: …`.
    pub stop: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShownRound {
    /// The model's text, exactly as generated.
    pub text: String,
    pub calls: Vec<ShownCall>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShownCall {
    pub name: String,
    /// The arguments after coercion, as compact JSON.
    pub arguments: String,
    /// The result the model was shown.
    pub result: String,
    pub is_error: bool,
}

/// The pairs of every comparison the summary holds (the wording's, then the skill effect's), by
/// category, sample and repeat within each, at most
/// [`PAIRS_SHOWN`] per comparison; and how many each comparison left out.
pub fn differing(record: &RunRecord, summary: &Summary) -> (Vec<Pair>, BTreeMap<String, usize>) {
    let mut by_key: BTreeMap<(&str, &str, u32), BTreeMap<Arm, &JournalEntry>> = BTreeMap::new();
    for entry in &record.entries {
        by_key
            .entry((&entry.category, &entry.sample_id, entry.repeat))
            .or_default()
            .insert(entry.arm, entry);
    }
    let mut pairs = Vec::new();
    let mut left_out = BTreeMap::new();
    // The wording first: it is what the author changed.
    for comparison in summary.wordings().chain(&summary.skill_effect) {
        let mut shown = 0;
        for ((category, sample_id, repeat), arms) in &by_key {
            let (Some(reference), Some(treatment)) = (
                arms.get(&comparison.reference),
                arms.get(&comparison.treatment),
            ) else {
                continue;
            };
            if reference.gapped || treatment.gapped || scored(reference) == scored(treatment) {
                continue;
            }
            if shown == PAIRS_SHOWN {
                *left_out.entry(comparison.name.clone()).or_insert(0) += 1;
                continue;
            }
            shown += 1;
            let mut laws: Vec<String> = reference
                .judgement
                .failed
                .iter()
                .chain(&treatment.judgement.failed)
                .cloned()
                .collect();
            laws.sort();
            laws.dedup();
            pairs.push(Pair {
                comparison: comparison.name.clone(),
                category: category.to_string(),
                sample_id: sample_id.to_string(),
                repeat: *repeat,
                seed: treatment.seed,
                prompt: record.prompts.get(*sample_id).cloned(),
                verdict: category_verdict(comparison, category),
                treatment_passed: scored(treatment),
                laws,
                reference: side(reference),
                treatment: side(treatment),
            });
        }
    }
    (pairs, left_out)
}

/// A run counts as passed when it passed and did not error, as in the statistics.
fn scored(entry: &JournalEntry) -> bool {
    entry.judgement.passed && !entry.errored
}

fn category_verdict(comparison: &Comparison, category: &str) -> String {
    comparison
        .categories
        .iter()
        .find(|r| r.name == category)
        .map_or("no_data", super::markup::verdict_class)
        .to_string()
}

fn side(entry: &JournalEntry) -> Side {
    let transcript = &entry.transcript;
    Side {
        arm: entry.arm,
        passed: scored(entry),
        errored: entry.errored,
        applied_laws: entry.judgement.applied_laws.clone(),
        failed_laws: entry.judgement.failed.clone(),
        rounds: transcript
            .rounds
            .iter()
            .map(|round| ShownRound {
                text: round.raw.clone(),
                calls: round
                    .calls
                    .iter()
                    .map(|call| ShownCall {
                        name: call.name.clone(),
                        arguments: call.arguments.to_string(),
                        result: call.result.clone(),
                        is_error: call.is_error,
                    })
                    .collect(),
            })
            .collect(),
        reply: transcript.reply.clone(),
        stop: match &transcript.stop {
            StopReason::Error(e) => format!("error: {e}"),
            other => other.name().to_string(),
        },
    }
}
