//! Unit tests of the comparisons: verdicts, the family, MDEs and the run's summary.

use super::*;
use crate::eval::arm::Arm;

fn outcome(sample: &str, category: &str, arm: Arm, repeat: u32, passed: bool) -> Outcome {
    Outcome {
        sample_id: sample.into(),
        category: category.into(),
        arm,
        repeat,
        passed,
        failed_laws: if passed { vec![] } else { vec!["law-a".into()] },
        applied_laws: vec!["law-a".into()],
        gapped: false,
        errored: false,
    }
}

/// `samples` samples in one category, `repeats` repeats, arms decided by `rule`.
fn runs(
    category: &str,
    samples: usize,
    repeats: u32,
    rule: impl Fn(usize, u32, Arm) -> bool,
) -> Vec<Outcome> {
    let mut all = Vec::new();
    for s in 0..samples {
        for r in 0..repeats {
            for arm in [Arm::Baseline, Arm::Variant(0)] {
                all.push(outcome(
                    &format!("{category}-{s}"),
                    category,
                    arm,
                    r,
                    rule(s, r, arm),
                ));
            }
        }
    }
    all
}

fn wording(outcomes: &[Outcome]) -> Comparison {
    summarize(outcomes).unwrap().wording
}

fn row<'a>(comparison: &'a Comparison, name: &str) -> &'a Row {
    comparison
        .categories
        .iter()
        .find(|r| r.name == name)
        .unwrap()
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() < tolerance
}

/// A simulated MDE is what its own power model says, per direction: a rise (or decline)
/// of that size is found at least 80% of the time, and 1 pp less is not; the row's MDE is
/// the larger of the directions it could see.
fn check_simulated_mde(outcomes: &[Outcome], category: &str) -> f64 {
    let (comparison, powers) =
        compare_with_power(outcomes, "wording", Arm::Baseline, Arm::Variant(0)).unwrap();
    let index = comparison
        .categories
        .iter()
        .position(|r| r.name == category)
        .unwrap();
    let row = &comparison.categories[index];
    let power = &powers.categories[index];
    assert!(matches!(power, RowPower::Simulated(_)));
    for (mde, sign) in [(row.mde_rise, 1.0), (row.mde_decline, -1.0)] {
        let Some(mde) = mde else { continue };
        let at = |effect: f64| power.power(sign * effect).unwrap_or(0.0);
        assert!(at(mde) >= POWER, "{mde}: {}", at(mde));
        assert!(at(mde - 0.01) < POWER, "{mde}: {}", at(mde - 0.01));
    }
    let mde = row.mde.unwrap();
    assert_eq!(
        Some(mde),
        [row.mde_rise, row.mde_decline]
            .into_iter()
            .flatten()
            .reduce(f64::max)
    );
    mde
}

#[test]
fn ten_samples_fixed_by_the_variant_are_better() {
    let outcomes = runs("c", 10, 1, |_, _, arm| arm == Arm::Variant(0));
    let comparison = wording(&outcomes);
    let c = &comparison.categories[0];
    assert_eq!((c.samples, c.pairs), (10, 10));
    // All ten differences +1: 2 of 2^10 sign patterns reach |sum| = 10.
    assert_eq!(c.p_value, 2.0 / 1024.0);
    // Every row of this comparison (the category, the total, the law, the laws held) has
    // the same ten differences: one test, nothing to pay for the copies.
    assert!(close(c.p_adjusted, c.p_value, 0.0015), "{}", c.p_adjusted);
    assert_eq!(c.delta, Some(1.0));
    assert_eq!(
        c.interval,
        Some(Interval {
            low: 1.0,
            high: 1.0
        })
    );
    assert_eq!(c.verdict, Verdict::Better);
    assert_eq!(comparison.total.verdict, Verdict::Better);
}

#[test]
fn repeats_of_one_sample_are_not_counted_as_independent_evidence() {
    // Four samples fixed, each seen in five identical repeats: 20 pairs but only four
    // samples, whose smallest possible p is 2/16.
    let outcomes = runs("c", 4, 5, |_, _, arm| arm == Arm::Variant(0));
    let c = &wording(&outcomes).categories[0];
    assert_eq!(c.p_value, 0.125);
    assert_eq!(c.smallest_p, 0.125);
    assert_eq!(c.verdict, Verdict::TooFewSamples);
    assert_eq!(c.verdict_label(), "too few samples");
}

#[test]
fn worse_is_the_mirror_of_better() {
    let outcomes = runs("c", 12, 1, |s, _, arm| arm == Arm::Baseline || s == 0);
    let c = &wording(&outcomes).categories[0];
    assert!(close(c.delta.unwrap(), -11.0 / 12.0, 1e-12));
    assert_eq!(c.p_value, 2.0 / 2048.0);
    assert_eq!(c.verdict, Verdict::Worse);
}

#[test]
fn the_family_steps_down_across_rows() {
    // a: 12 of 12 fixed, p = 2/4096. b: 6 of 6 fixed, p = 2/64. c: no change, p = 1.
    let mut outcomes = runs("a", 12, 1, |_, _, arm| arm == Arm::Variant(0));
    outcomes.extend(runs("b", 6, 1, |_, _, arm| arm == Arm::Variant(0)));
    outcomes.extend(runs("c", 10, 1, |_, _, _| true));
    let comparison = wording(&outcomes);
    let (a, b, c) = (
        row(&comparison, "a"),
        row(&comparison, "b"),
        row(&comparison, "c"),
    );
    assert_eq!(a.verdict, Verdict::Better);
    assert_eq!(comparison.total.verdict, Verdict::Better);
    // Holm over the three categories would give b 2 × 2/64 = 0.0625 and no verdict. Once a
    // and the total are rejected, b faces only rows that cannot move (c, where every run
    // passed in both arms), so it pays nothing for them: its adjusted p is its own.
    assert!(close(b.p_adjusted, 2.0 / 64.0, 0.006), "{}", b.p_adjusted);
    assert_eq!(b.verdict, Verdict::Better);
    assert_eq!(c.p_adjusted, 1.0);
    assert_eq!(c.verdict, Verdict::NoChange);
    // The level a row faces alone is under α and above Holm's α/3 for three categories:
    // the rows here move together.
    assert!(a.level <= ALPHA && a.level > ALPHA / 3.0, "{}", a.level);
}

#[test]
fn a_small_row_takes_its_mde_from_its_own_test() {
    // 15 samples, one repeat: three fixed, three broken, nine unchanged.
    let outcomes = runs("c", 15, 1, |s, _, arm| match s {
        0..=2 => arm == Arm::Variant(0),
        3..=5 => arm == Arm::Baseline,
        _ => true,
    });
    let c = &wording(&outcomes).categories[0];
    assert_eq!(c.delta, Some(0.0));
    // 15 samples: the MDE comes from the simulation of the row's own test.
    let mde = check_simulated_mde(&outcomes, "c");
    assert_eq!(c.mde, Some(mde));
    assert!(!c.mde_floored);
    assert_eq!(c.verdict, Verdict::NoChange);
    // The baseline passes 80%: a rise of the MDE has no room, and the label says so.
    assert_eq!(c.mde_rise, None);
    let label = format!("no fall ≥ {:.0}, ↑ unseen", (mde * 100.0).ceil());
    assert_eq!(c.unseen(), (true, false));
    assert_eq!(c.verdict_label(), label);
    // A Δ as large as the MDE that the test did not confirm is no claim of "no change".
    let mut unconfirmed = c.clone();
    unconfirmed.delta = Some(-mde);
    assert_eq!(unconfirmed.verdict_label(), "inconclusive");
    // One repeat cannot tell repeat noise from sample spread.
    assert_eq!(c.repeats_for_target, RepeatsNeeded::Unknown);
}

/// The worked example of docs/packs.md ("Reading the table"), figures by hand.
#[test]
fn the_worked_example_of_the_docs() {
    // Ten categories of 15 samples, two repeats. In `c0` the variant passes 6 samples once
    // more (d = ½), 3 samples twice more (d = 1), and leaves 6 alone; the other nine
    // categories pass everything in both arms.
    let mut outcomes = runs("c0", 15, 2, |s, r, arm| match (s, arm) {
        (0..=5, Arm::Variant(0)) => r == 0,
        (6..=8, Arm::Variant(0)) => true,
        (9..=14, _) => true,
        _ => false,
    });
    for c in 1..10 {
        outcomes.extend(runs(&format!("c{c}"), 15, 2, |_, _, _| true));
    }
    let comparison = wording(&outcomes);
    let c0 = row(&comparison, "c0");
    // Δ = (6 × ½ + 3 × 1) / 15 = 0.4.
    assert!(close(c0.delta.unwrap(), 0.4, 1e-12));
    // Nine non-zero differences, all positive: 2 of 2^9 sign patterns reach the sum.
    assert_eq!(c0.p_value, 2.0 / 512.0);
    // Holm over ten categories would multiply it by 10. The nine categories where every run
    // passed cannot move, and the total, the law and the laws held have the same nine
    // differences as c0: the family is one test, and the adjusted p is the raw one.
    assert!(
        close(c0.p_adjusted, 2.0 / 512.0, 0.0015),
        "{}",
        c0.p_adjusted
    );
    assert!(c0.interval.unwrap().low > 0.0);
    assert_eq!(c0.verdict, Verdict::Better);
    // The t-test formula would say: variance of d (6 × 0.1² + 3 × 0.6² + 6 × 0.4²) / 14 =
    // 0.15; level 0.05 / 10; t(14) quantiles 3.325696 (0.9975) and 0.868055 (0.8); step
    // 2 / (15 × 2), half added: 0.453. That is Holm's level, not the one this row faces:
    // its family is one test, so its level is near α and its MDE below that figure.
    let formula = (3.325_696 + 0.868_055) * (0.15f64 / 15.0).sqrt() + 1.0 / 30.0;
    let mde = check_simulated_mde(&outcomes, "c0");
    eprintln!(
        "worked example: c0 p {} adj {} level {} mde {:?}; c1 {}",
        c0.p_value,
        c0.p_adjusted,
        c0.level,
        c0.mde,
        row(&comparison, "c1").verdict_label()
    );
    assert!(c0.level > ALPHA / 10.0 && c0.level <= ALPHA, "{}", c0.level);
    assert!(mde < formula, "{mde} vs {formula}");
    assert_eq!(c0.verdict_label(), "better");
    // A category where everything passed: every sample's probability is (4 + ½)/(4 + 1)
    // = 0.9, so a rise has little room and the MDE is the drop found 80% of the time.
    let c1 = row(&comparison, "c1");
    assert!(!c1.mde_floored);
    assert_eq!(c1.verdict, Verdict::NoChange);
    let mde = check_simulated_mde(&outcomes, "c1");
    assert_eq!(
        c1.mde_rise, None,
        "a category that always passed cannot rise"
    );
    let label = format!("no fall ≥ {:.0}, ↑ unseen", (mde * 100.0).ceil());
    assert_eq!(c1.verdict_label(), label);
}

#[test]
fn a_category_where_everything_passed_gets_the_floor() {
    let outcomes = runs("c", 15, 3, |_, _, _| true);
    let c = &wording(&outcomes).categories[0];
    // The simulated MDE does not use the floor (the smoothed probabilities stand in for
    // it); the repeats for the target still do. By hand: p̃ = (90 + 3) / (90 + 6); floor
    // 2·p̃(1 − p̃)/3; step 2/45.
    assert!(!c.mde_floored);
    check_simulated_mde(&outcomes, "c");
    let pooled: f64 = 93.0 / 96.0;
    let floor = 2.0 * pooled * (1.0 - pooled) / 3.0;
    assert!(close(c.variance.unwrap(), floor, 1e-12), "{:?}", c.variance);
    // All the floor's variance counts as repeat noise: σ²_w = 3·floor, τ² = 0, and the room
    // for 10 pp is 15·((0.10 − 1/45)/3.012957)², so r = ⌈σ²_w / room⌉ = 7.
    let room = 15.0 * ((0.10f64 - 1.0 / 45.0) / (2.144_787 + 0.868_055)).powi(2);
    let needed = (3.0 * floor / room).ceil() as u64;
    assert_eq!(needed, 7);
    assert_eq!(c.repeats_for_target, RepeatsNeeded::Repeats(needed));
}

#[test]
fn an_a_a_run_has_no_verdict_even_when_flaky() {
    // Same pseudo-random pass pattern in both arms.
    let outcomes = runs("c", 30, 3, |s, r, _| (s * 7 + r as usize * 3) % 5 < 3);
    let total = wording(&outcomes).total;
    assert_eq!(total.p_value, 1.0);
    assert_eq!(total.delta, Some(0.0));
    assert_eq!(total.verdict, Verdict::NoChange);
    assert_eq!(total.reference.band, total.treatment.band);
    assert!(total.reference.flaky > 0);
}

#[test]
fn bands_span_per_repeat_rates() {
    // Baseline passes 2, 3, 1 of 4 samples in repeats 0, 1, 2.
    let passing_per_repeat = [2, 3, 1];
    let outcomes = runs("c", 4, 3, |s, r, arm| match arm {
        Arm::Baseline => s < passing_per_repeat[r as usize],
        _ => true,
    });
    let c = &wording(&outcomes).categories[0];
    assert_eq!(
        c.reference.band,
        Some(Band {
            min: 0.25,
            max: 0.75
        })
    );
    assert!(close(c.reference.rate.unwrap(), 0.5, 1e-12));
    assert_eq!(c.treatment.band, Some(Band { min: 1.0, max: 1.0 }));
    let shape = |a: &ArmSummary| (a.always_pass, a.always_fail, a.flaky);
    assert_eq!(shape(&c.reference), (1, 1, 2));
    assert_eq!(shape(&c.treatment), (4, 0, 0));
}

#[test]
fn gapped_runs_are_scored_as_judged_and_counted_per_arm() {
    let mut outcomes = runs("c", 10, 1, |_, _, arm| arm == Arm::Variant(0));
    // Two variant runs met a gap: they stay in the rates and the test, as judged.
    for o in outcomes
        .iter_mut()
        .filter(|o| o.arm == Arm::Variant(0))
        .take(2)
    {
        o.gapped = true;
    }
    outcomes.push(outcome("lonely", "c", Arm::Baseline, 0, true));
    let c = &wording(&outcomes).categories[0];
    assert_eq!((c.gapped_pairs, c.unpaired_runs), (2, 1));
    assert_eq!((c.pairs, c.samples), (10, 10));
    assert_eq!((c.reference.gapped, c.treatment.gapped), (0, 2));
    assert_eq!(c.treatment.rate, Some(1.0));
    assert_eq!(c.p_value, 2.0 / 1024.0);
}

#[test]
fn a_gap_that_failed_weighs_against_its_arm() {
    // Dropping gapped pairs moved a comparison toward the arm that gapped more: here the
    // variant gaps, and fails, in 8 of 10 samples, and is worse for it.
    let mut outcomes = runs("c", 10, 1, |s, _, arm| arm == Arm::Baseline || s >= 8);
    for o in outcomes
        .iter_mut()
        .filter(|o| o.arm == Arm::Variant(0) && !o.passed)
    {
        o.gapped = true;
    }
    let comparison = wording(&outcomes);
    let c = &comparison.categories[0];
    assert_eq!(c.treatment.gapped, 8);
    assert_eq!(c.verdict, Verdict::Worse);
    assert_eq!(comparison.gaps(), (0, 8));
}

#[test]
fn errored_runs_count_as_failures() {
    let mut outcomes = runs("c", 2, 1, |_, _, _| true);
    outcomes[1].errored = true; // sample 0, variant
    let c = &wording(&outcomes).categories[0];
    assert_eq!(c.treatment.rate, Some(0.5));
    assert_eq!(c.treatment.errored, 1);
}

#[test]
fn laws_get_rows_over_the_runs_they_applied_to() {
    // law-a applies everywhere; law-b only in category b, where the variant breaks it in
    // every one of 8 samples.
    let mut outcomes = runs("a", 8, 1, |_, _, _| true);
    let mut b = runs("b", 8, 1, |_, _, arm| arm == Arm::Baseline);
    for o in &mut b {
        o.applied_laws = vec!["law-a".into(), "law-b".into()];
        o.failed_laws = if o.passed {
            vec![]
        } else {
            vec!["law-b".into()]
        };
    }
    outcomes.extend(b);
    let comparison = wording(&outcomes);
    let names: Vec<&str> = comparison.laws.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["law-a", "law-b"]);
    let (law_a, law_b) = (&comparison.laws[0], &comparison.laws[1]);
    assert_eq!((law_a.samples, law_b.samples), (16, 8));
    assert_eq!(law_a.delta, Some(0.0));
    assert_eq!(law_b.delta, Some(-1.0));
    assert_eq!(
        (law_b.reference.rate, law_b.treatment.rate),
        (Some(1.0), Some(0.0))
    );
    // law-b's differences are category b's: they share one test in the family.
    assert!(close(law_b.p_value, 2.0 / 256.0, 1e-12));
    assert!(
        close(law_b.p_adjusted, 2.0 / 256.0, 0.003),
        "{}",
        law_b.p_adjusted
    );
    assert_eq!(law_b.verdict, Verdict::Worse);
    assert_eq!(
        comparison.law_failures,
        vec![LawFailures {
            law: "law-b".into(),
            reference: 0,
            treatment: 8
        }]
    );
}

#[test]
fn old_journals_without_applied_laws_have_no_law_rows() {
    let mut outcomes = runs("c", 4, 1, |_, _, _| true);
    outcomes.iter_mut().for_each(|o| o.applied_laws.clear());
    assert!(wording(&outcomes).laws.is_empty());
}

#[test]
fn control_outcomes_add_the_skill_effect() {
    let mut outcomes = runs("c", 10, 1, |_, _, _| true);
    assert_eq!(summarize(&outcomes).unwrap().skill_effect, None);
    for s in 0..10 {
        outcomes.push(outcome(&format!("c-{s}"), "c", Arm::Control, 0, false));
    }
    let summary = summarize(&outcomes).unwrap();
    let skill = summary.skill_effect.unwrap();
    assert_eq!(
        (skill.reference, skill.treatment),
        (Arm::Control, Arm::Baseline)
    );
    assert_eq!(skill.total.delta, Some(1.0));
    assert!(skill.any_change());
    assert!(!summary.wording.any_change());
}

#[test]
fn flaky_samples_are_listed_per_arm() {
    let outcomes = runs("c", 2, 2, |s, r, arm| {
        let variant_slip = arm == Arm::Variant(0) && s == 1 && r == 0;
        let baseline_slip = arm == Arm::Baseline && s == 0 && r == 1;
        !(variant_slip || baseline_slip)
    });
    let summary = summarize(&outcomes).unwrap();
    let flaky: Vec<(&str, Arm)> = summary
        .flaky_samples
        .iter()
        .map(|f| (f.sample_id.as_str(), f.arm))
        .collect();
    assert_eq!(
        flaky,
        vec![("c-0", Arm::Baseline), ("c-1", Arm::Variant(0))]
    );
}

#[test]
fn duplicates_and_category_clashes_are_refused() {
    let twice = vec![
        outcome("s", "c", Arm::Baseline, 0, true),
        outcome("s", "c", Arm::Baseline, 0, false),
    ];
    assert!(matches!(
        summarize(&twice),
        Err(StatsError::Duplicate { .. })
    ));
    let clash = vec![
        outcome("s", "c", Arm::Baseline, 0, true),
        outcome("s", "d", Arm::Variant(0), 0, true),
    ];
    assert!(matches!(
        summarize(&clash),
        Err(StatsError::CategoryClash { .. })
    ));
}

#[test]
fn outcomes_deserialize_with_defaults() {
    let o: Outcome = serde_json::from_str(
        r#"{"sample_id":"s","category":"c","arm":"control","repeat":2,"passed":true}"#,
    )
    .unwrap();
    assert_eq!(
        (o.arm, o.repeat, o.gapped, o.errored, o.applied_laws.len()),
        (Arm::Control, 2, false, false, 0)
    );
}
