//! Laws that held in no unit of any arm, and tools no unit called. Such a law fails every sample
//! it applies to, so it pins each category it covers at 0% pass whatever the wording does: a
//! broken law, or a demand the model never meets, either way worth a look before the table is
//! read. A tool never called is the commonest such demand: a small model often calls a tool only
//! once the skill shows it a worked call.

use std::collections::{BTreeMap, BTreeSet};

use crate::eval::record::journal::JournalEntry;

/// A law that applied to `applied` units and held in none, and the categories it pins.
#[derive(Debug, Clone, PartialEq)]
pub struct NeverHeld {
    pub law: String,
    pub applied: usize,
    /// Of those units, the ones where the model called some tool.
    pub with_calls: usize,
    /// Of those units, how many called each tool (by name), and how many of those got an
    /// answer that was no error.
    pub calling: BTreeMap<String, (usize, usize)>,
    pub categories: BTreeSet<String>,
}

/// The tool each law that names one reads, by law name.
pub fn law_tools(laws: &[crate::eval::judge::Law]) -> BTreeMap<String, String> {
    laws.iter()
        .filter_map(|l| Some((l.name.clone(), l.check().tool()?.to_string())))
        .collect()
}

pub fn never_held(entries: &[JournalEntry]) -> Vec<NeverHeld> {
    // Each law in first-seen order, with its tally.
    let mut order: Vec<String> = Vec::new();
    let mut tally: BTreeMap<String, (usize, NeverHeld)> = BTreeMap::new();
    for entry in entries {
        let mut called: BTreeMap<&str, bool> = BTreeMap::new();
        for call in entry.transcript.calls() {
            *called.entry(call.name.as_str()).or_default() |= !call.is_error;
        }
        for law in &entry.judgement.applied_laws {
            let (held, row) = tally.entry(law.clone()).or_insert_with(|| {
                order.push(law.clone());
                let row = NeverHeld {
                    law: law.clone(),
                    applied: 0,
                    with_calls: 0,
                    calling: BTreeMap::new(),
                    categories: BTreeSet::new(),
                };
                (0, row)
            });
            row.applied += 1;
            *held += usize::from(!entry.judgement.failed.contains(law));
            row.with_calls += usize::from(!called.is_empty());
            for (tool, answered) in &called {
                let count = row.calling.entry((*tool).to_string()).or_default();
                count.0 += 1;
                count.1 += usize::from(*answered);
            }
            row.categories.insert(entry.category.clone());
        }
    }
    order
        .into_iter()
        .filter_map(|law| {
            let (held, row) = tally.remove(&law)?;
            (row.applied > 0 && held == 0).then_some(row)
        })
        .collect()
}

/// One warning line per such law. Where the model called no tool in any unit the law applied
/// to, that is said first: a law that needs a call cannot hold then, however right it is. Where
/// the law reads a tool (`law_tools`) that the model seldom called (in under a tenth of those
/// units), or whose every call came back an error (a write refused for want of approval, a
/// gap, a failure), that is named as the likely cause before the law itself is suspected.
pub fn warnings(entries: &[JournalEntry], law_tools: &BTreeMap<String, String>) -> Vec<String> {
    never_held(entries)
        .into_iter()
        .map(|n| {
            let categories = n.categories.iter().cloned().collect::<Vec<_>>().join(", ");
            let head = format!(
                "warning: law `{}` held in no unit of any arm (0 of {} it applied to)",
                n.law, n.applied
            );
            let tool = law_tools.get(&n.law);
            let (calls, answered) = tool
                .and_then(|t| n.calling.get(t).copied())
                .unwrap_or((0, 0));
            let score = "(`skilleval score` reads how likely the call is; `skilleval check` tests the law itself)";
            match tool {
                _ if n.with_calls == 0 => format!(
                    "{head}, and in none of them did the model call a tool: it pins {categories} at 0% pass because the model does not call, which a law about the call or its result cannot get past (`skilleval check` tests the law itself on reference replies; `skilleval score` reads how likely the call is)"
                ),
                Some(tool) if (calls as f64) < RARE_CALLS * n.applied as f64 => format!(
                    "{head}: it pins {categories} at 0% pass, and the model called {tool} in {calls} of {} units: a law about a call the model seldom makes, or its result, can hardly hold, however right it is {score}",
                    n.applied
                ),
                Some(tool) if answered == 0 => format!(
                    "{head}: it pins {categories} at 0% pass, and every call to {tool} ({calls} of {} units) came back an error (a write refused for want of approval, a call no recording answers, a failure): a law that reads its result cannot hold; read those calls' results before the law",
                    n.applied
                ),
                _ => format!(
                    "{head}: it pins {categories} at 0% pass; check the law with `skilleval check`"
                ),
            }
        })
        .collect()
}

/// The tools of `offered` that no unit of any arm called, in the order given.
pub fn uncalled_tools<'a>(entries: &[JournalEntry], offered: &[&'a str]) -> Vec<&'a str> {
    let called: BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| &e.transcript.rounds)
        .flat_map(|r| &r.calls)
        .map(|c| c.name.as_str())
        .collect();
    offered
        .iter()
        .copied()
        .filter(|tool| !called.contains(tool))
        .collect()
}

/// One note for the tools no unit called, or none when every tool was called somewhere.
pub fn uncalled_note(entries: &[JournalEntry], offered: &[&str]) -> Option<String> {
    let uncalled = uncalled_tools(entries, offered);
    (!entries.is_empty() && !uncalled.is_empty()).then(|| {
        format!(
            "warning: the model called {} in no unit of any arm; a small model often calls a tool only after a worked call in the skill (an `example` block, docs/harness.md), and `skilleval score` reads the probability of the call where no unit makes one (docs/score.md)",
            uncalled.join(", ")
        )
    })
}

/// Below this share of the baseline's units calling a tool, sampled rates see little.
const RARE_CALLS: f64 = 0.1;

/// One note for a tool the baseline called rarely (but for tools it never called, which
/// [`uncalled_note`] names): sampled pass rates that low hide most changes a wording makes,
/// and `skilleval score` reads the probabilities instead.
pub fn rare_call_note(entries: &[JournalEntry], offered: &[&str]) -> Option<String> {
    let baseline: Vec<&JournalEntry> = entries
        .iter()
        .filter(|e| e.arm == crate::eval::arm::Arm::Baseline)
        .collect();
    if baseline.is_empty() {
        return None;
    }
    let rare: Vec<String> = offered
        .iter()
        .filter_map(|tool| {
            let called = baseline
                .iter()
                .filter(|e| e.transcript.calls().any(|c| c.name == *tool))
                .count();
            let share = called as f64 / baseline.len() as f64;
            (called > 0 && share < RARE_CALLS)
                .then(|| format!("{tool} in {called} of {} units", baseline.len()))
        })
        .collect();
    (!rare.is_empty()).then(|| {
        format!(
            "note: the baseline called {}: sampled rates this low hide most changes of wording; `skilleval score` reads the model's probability of each step instead, with no repeats (docs/score.md)",
            rare.join(", ")
        )
    })
}
