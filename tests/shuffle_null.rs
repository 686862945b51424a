//! The error budget against real data with the arms shuffled: the null that needs no model of
//! the effect. Each journal here is the outcomes of a real run on the default model (the
//! transcripts left out); shuffling the arm labels within every (sample, repeat) makes every
//! arm a draw of the same thing, so any better, worse or mixed anywhere in the wording report
//! is false. The share of shuffles with one must stay within the stated 5%.
//!
//! `SKILLEVAL_SHUFFLES` sets the shuffles per journal (default 200; decision 015 gives 2,000).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use skilleval::eval::stats::method::Rng;
use skilleval::eval::stats::{summarize_with, Effort, Outcome, Row};

/// The report's joint flips, 2,000 bootstrap resamples (a report uses 50,000), no power
/// analysis: the verdicts only.
const EFFORT: Effort = Effort {
    bootstrap_resamples: 2_000,
    joint_flips: 10_000,
    power: false,
};

fn shuffles() -> usize {
    common::env::count("SKILLEVAL_SHUFFLES", 200)
}

fn journal(name: &str) -> Vec<Outcome> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/journals")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The outcomes with the arm labels of every (sample, repeat) dealt out again at random.
fn shuffled(outcomes: &[Outcome], rng: &mut Rng) -> Vec<Outcome> {
    let mut groups: BTreeMap<(&str, u32), Vec<usize>> = BTreeMap::new();
    for (i, o) in outcomes.iter().enumerate() {
        groups.entry((&o.sample_id, o.repeat)).or_default().push(i);
    }
    let mut out = outcomes.to_vec();
    for members in groups.values() {
        let mut arms: Vec<_> = members.iter().map(|&i| outcomes[i].arm).collect();
        for i in (1..arms.len()).rev() {
            arms.swap(i, rng.below(i + 1));
        }
        for (&i, arm) in members.iter().zip(arms) {
            out[i].arm = arm;
        }
    }
    out
}

/// Shuffles of `name` with some wording row called, and how many were drawn.
fn false_verdicts(name: &str, seed: u64) -> (usize, usize) {
    let outcomes = journal(name);
    let mut rng = Rng::new(seed);
    let count = shuffles();
    let mut called = 0;
    let mut rows_called: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..count {
        let summary = summarize_with(&shuffled(&outcomes, &mut rng), EFFORT).unwrap();
        let mut any = false;
        for wording in summary.wordings() {
            for row in wording.rows().filter(|r| Row::changed(r)) {
                any = true;
                *rows_called.entry(row.name.clone()).or_default() += 1;
            }
        }
        called += usize::from(any);
    }
    eprintln!(
        "{name}: a false verdict somewhere in the wording report in {called} of {count} shuffles \
         ({:.1}%); rows called: {rows_called:?}",
        100.0 * called as f64 / count as f64
    );
    (called, count)
}

/// A bound 2.5 standard errors above 5%: at a true rate of 5%, 200 shuffles exceed it (18) in
/// about 1% of batches.
fn assert_within_budget((called, count): (usize, usize)) {
    let bound = (0.05 * count as f64 + 2.5 * (0.05 * 0.95 * count as f64).sqrt()).ceil() as usize;
    assert!(
        called <= bound,
        "{called} of {count} shuffles had a false verdict (bound {bound})"
    );
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn four_wordings_shuffled_stay_within_the_error_budget() {
    // Baseline and four variants (b.md, no-call.md, drops-place.md, reworded.md) over plain_city,
    // city_country, city_us_state and not_weather, 3 repeats, no control.
    assert_within_budget(false_verdicts("four-wordings.jsonl", 28));
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_readme_command_shuffled_stays_within_the_error_budget() {
    // Control, baseline and b.md over city_country, plain_city and not_weather, 6 repeats: the
    // README's command. All three arms are shuffled, so the wording compares two draws of one
    // mixture.
    assert_within_budget(false_verdicts("readme-command.jsonl", 29));
}

#[test]
fn unshuffled_the_wordings_that_broke_a_law_fail_and_the_neutral_edit_does_not() {
    // Known by construction of the wordings: no-call.md's examples never call the tool,
    // drops-place.md's answers never name the resolved place, reworded.md rephrases one sentence.
    let summary = skilleval::eval::stats::summarize(&journal("four-wordings.jsonl")).unwrap();
    let wording = |label: &str| {
        summary
            .wordings()
            .zip(["b.md", "no-call.md", "drops-place.md", "reworded.md"])
            .find(|(_, name)| *name == label)
            .map(|(w, _)| w)
            .unwrap()
    };
    let law = |label: &str, name: &str| {
        wording(label)
            .laws
            .iter()
            .find(|r| r.name == name)
            .unwrap()
            .verdict
    };
    use skilleval::eval::stats::Verdict;
    assert_eq!(law("no-call.md", "calls-weather-lookup"), Verdict::Worse);
    assert!(
        wording("no-call.md").any_decline(),
        "--fail-on worse stops it"
    );
    assert_eq!(
        law("drops-place.md", "names-resolved-place"),
        Verdict::Worse
    );
    assert!(
        wording("drops-place.md").any_decline(),
        "--fail-on worse stops it"
    );
    assert!(
        !wording("reworded.md").any_change(),
        "the neutral edit stays clean"
    );
}
