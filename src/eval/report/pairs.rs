//! The samples a report shows side by side: for each comparison of a run, every (sample,
//! repeat) whose two arms' outcomes differ for some row of the comparison (the pass, the share
//! of laws held, or one law held), gapped pairs included as the statistics score them, with the
//! rows each pair backs and what a reader needs of each run: the calls with their arguments and
//! replayed results, the reply, and the laws that failed.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::eval::arm::Arm;
use crate::eval::record::journal::JournalEntry;
use crate::eval::record::RunRecord;
use crate::eval::run_summary::outcome;
use crate::eval::stats::{Comparison, Outcome, Summary};
use crate::harness::transcript::StopReason;

/// Pairs shown per comparison; a report beyond that says how many it left out.
pub const PAIRS_SHOWN: usize = 400;

/// One (sample, repeat) whose arms' outcomes differ for some row of its comparison.
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
    /// One arm passed and the other did not: the pair backs its category's pass rate.
    pub pass_differs: bool,
    /// The arms' shares of laws held differ: the pair backs its category's laws-held share.
    pub held_differs: bool,
    /// The treatment passed where the reference failed.
    pub treatment_passed: bool,
    /// The laws held on one side and not on the other: the law rows the pair backs.
    pub laws: Vec<String>,
    /// The verdict of each of `laws`' rows, in the same order.
    pub law_verdicts: Vec<String>,
    pub reference: Side,
    pub treatment: Side,
}

impl Pair {
    /// The verdicts of the rows the pair backs: its category's, then each law's.
    pub fn verdicts(&self) -> Vec<&str> {
        let category = (self.pass_differs || self.held_differs).then_some(self.verdict.as_str());
        let mut all: Vec<&str> = category
            .into_iter()
            .chain(self.law_verdicts.iter().map(String::as_str))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// One arm's run of the pair.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub arm: Arm,
    pub passed: bool,
    pub errored: bool,
    /// A call met no recording: scored as judged, as in the statistics.
    pub gapped: bool,
    /// The share of the run's laws that held, as the statistics grade it.
    pub laws_held: f64,
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
    /// What the scripted user said after this round, and to what (`question`, `approval`,
    /// `answer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<(String, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShownCall {
    pub name: String,
    /// The arguments after coercion, as compact JSON.
    pub arguments: String,
    /// The result the model was shown.
    pub result: String,
    pub is_error: bool,
    /// For a write: whether the user allowed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
}

/// The pairs of every comparison the summary holds (the wording's, then the skill effect's), by
/// category, sample and repeat within each, at most [`PAIRS_SHOWN`] per comparison; and how
/// many each comparison left out.
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
            let (r, t) = (outcome(reference), outcome(treatment));
            let pass_differs = r.scored_pass() != t.scored_pass();
            let held_differs = r.laws_held_share() != t.laws_held_share();
            let laws: Vec<String> = law_names(&[&r, &t])
                .into_iter()
                .filter(|law| r.law_held(law) != t.law_held(law))
                .collect();
            if !pass_differs && !held_differs && laws.is_empty() {
                continue;
            }
            if shown == PAIRS_SHOWN {
                *left_out.entry(comparison.name.clone()).or_insert(0) += 1;
                continue;
            }
            shown += 1;
            pairs.push(Pair {
                comparison: comparison.name.clone(),
                category: category.to_string(),
                sample_id: sample_id.to_string(),
                repeat: *repeat,
                seed: treatment.seed,
                prompt: record.prompts.get(*sample_id).cloned(),
                verdict: category_verdict(comparison, category),
                pass_differs,
                held_differs,
                treatment_passed: t.scored_pass(),
                law_verdicts: laws.iter().map(|l| law_verdict(comparison, l)).collect(),
                laws,
                reference: side(reference),
                treatment: side(treatment),
            });
        }
    }
    (pairs, left_out)
}

/// Every law that applied to or failed in either run, sorted.
fn law_names(outcomes: &[&Outcome]) -> Vec<String> {
    let mut names: Vec<String> = outcomes
        .iter()
        .flat_map(|o| o.applied_laws.iter().chain(&o.failed_laws))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}

fn law_verdict(comparison: &Comparison, law: &str) -> String {
    comparison
        .laws
        .iter()
        .find(|r| r.name == law)
        .map_or("no_data", super::markup::verdict_class)
        .to_string()
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
    let outcome = outcome(entry);
    Side {
        arm: entry.arm,
        passed: outcome.scored_pass(),
        errored: entry.errored,
        gapped: entry.gapped,
        laws_held: outcome.laws_held_share(),
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
                        approved: call.approved,
                    })
                    .collect(),
                user: round
                    .user
                    .as_ref()
                    .map(|u| (u.on.name().to_string(), u.said.clone())),
            })
            .collect(),
        reply: transcript.reply.clone(),
        stop: match &transcript.stop {
            StopReason::Error(e) => format!("error: {e}"),
            other => other.name().to_string(),
        },
    }
}
