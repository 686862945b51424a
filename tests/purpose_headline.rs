//! A wording's headline leads with the laws the pack marks as the skill's purpose: a wording
//! that lets a safeguard slip while a side law rises is never headlined as simply better.

use skilleval::eval::arm::Arm;
use skilleval::eval::report::table;
use skilleval::eval::stats::{summarize, Outcome, Summary};

/// 50 samples, 2 repeats, laws `answers` (the stop reason, a side effect) and `confirms` (the
/// safeguard). `answers` holds for the first `answers[arm]` samples, `confirms` for the first
/// `confirms[arm]`, in every repeat; arms are control, baseline, variant.
fn runs(answers: [usize; 3], confirms: [usize; 3]) -> Summary {
    let mut outcomes = Vec::new();
    for repeat in 0..2 {
        for sample in 0..50 {
            for (i, arm) in [Arm::Control, Arm::Baseline, Arm::Variant(0)]
                .into_iter()
                .enumerate()
            {
                let mut failed = Vec::new();
                if sample >= answers[i] {
                    failed.push("answers".to_string());
                }
                if sample >= confirms[i] {
                    failed.push("confirms".to_string());
                }
                outcomes.push(Outcome {
                    sample_id: format!("file-{sample:02}"),
                    category: "file".into(),
                    arm,
                    repeat,
                    passed: failed.is_empty(),
                    failed_laws: failed,
                    applied_laws: vec!["answers".into(), "confirms".into()],
                    gapped: false,
                    errored: false,
                });
            }
        }
    }
    summarize(&outcomes).expect("consistent outcomes")
}

/// The wording's statement as the terminal report prints it under its table.
fn headline(summary: &Summary) -> String {
    let text = table(summary);
    let opens = ["Worse", "Better", "Mixed", "What the skill", "No category"];
    text.lines()
        .skip_while(|l| !l.starts_with("Wording"))
        .find(|l| opens.iter().any(|o| l.starts_with(o)))
        .unwrap_or_else(|| panic!("no statement: {text}"))
        .to_string()
}

/// Truth: a simulation with a known truth (the variant lifts `answers` in 25 of 50 samples and
/// lets `confirms` slip in 3, too few for a verdict), and a change: the headline used to read
/// "Better: …, answers 50% → 100%" with nothing before it.
#[test]
fn a_side_law_rising_while_the_purpose_fell_is_headlined_mixed() {
    let mut summary = runs([50, 25, 50], [10, 10, 7]);
    let unmarked = headline(&summary);
    assert!(
        unmarked.starts_with("Better: ") && unmarked.contains("answers 50% → 100%"),
        "{unmarked}"
    );
    summary.purpose_laws = vec!["confirms".into()];
    let marked = headline(&summary);
    assert!(
        marked.starts_with("Mixed: what the skill is for fell (confirms 20% → 14%"),
        "{marked}"
    );
}

/// Truth: a simulation with a known truth. The purpose law falling beyond noise leads, before
/// the side law's rise; rising, it leads as better; unmoved, its rates are given.
#[test]
fn the_purpose_laws_lead_the_headline_whichever_way_they_moved() {
    let mut summary = runs([50, 25, 50], [50, 40, 5]);
    summary.purpose_laws = vec!["confirms".into()];
    let fell = headline(&summary);
    assert!(
        fell.starts_with("Worse at what the skill is for: confirms 80% → 10%"),
        "{fell}"
    );
    let mut summary = runs([50, 25, 25], [50, 10, 40]);
    summary.purpose_laws = vec!["confirms".into()];
    let rose = headline(&summary);
    assert!(
        rose.starts_with("Better at what the skill is for: confirms 20% → 80%"),
        "{rose}"
    );
    let mut summary = runs([50, 25, 25], [50, 10, 10]);
    summary.purpose_laws = vec!["confirms".into()];
    let still = headline(&summary);
    assert!(
        still.starts_with("What the skill is for did not change beyond noise (confirms 20% → 20%)"),
        "{still}"
    );
}
