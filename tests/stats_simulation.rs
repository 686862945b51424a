//! The statistics against simulated runs with a known truth, no model: runs shaped like the
//! weather corpus (10 categories of 14–15 samples, 3 repeats), each sample with its own pass
//! probability drawn from a spread like real runs' (many samples that nearly always pass or
//! fail, some in between), shared by both arms unless an effect is planted.
//!
//! Checked: with no effect, a run calls some row better or worse in at most 5% of runs (the
//! family's promise); with an effect planted in one category of 15 samples, the share of runs
//! that call it better matches the power the run's own MDE promises.

use skilleval::eval::arm::Arm;
use skilleval::eval::stats::method::Rng;
use skilleval::eval::stats::{
    compare_many_with_power_at, Comparison, Effort, Outcome, Powers, Row, Verdict, POWER,
};

/// Fewer bootstrap resamples and joint flips than a report (2,000 each), with its power
/// analysis: the verdicts and MDEs of a report, at a cost a thousand runs can pay.
const EFFORT: Effort = Effort {
    bootstrap_resamples: 2_000,
    joint_flips: 2_000,
    power: true,
};

const CATEGORY_SIZES: [usize; 10] = [15, 15, 15, 15, 14, 14, 14, 14, 14, 14];
const REPEATS: u32 = 3;
/// The category that carries a planted effect (15 samples).
const PLANTED: usize = 0;

fn category_name(c: usize) -> String {
    format!("c{c}")
}

/// A pass probability with the spread of real runs: about a third of samples nearly always
/// pass, a quarter nearly always fail, the rest anywhere in between.
fn pass_probability(rng: &mut Rng) -> f64 {
    let u = rng.unit();
    if u < 0.35 {
        1.0 - 0.1 * rng.unit()
    } else if u < 0.6 {
        0.1 * rng.unit()
    } else {
        0.1 + 0.8 * rng.unit()
    }
}

/// The shift c with mean(min(1, p + c) − p) = effect, by bisection; `None` when the samples
/// cannot rise that much on average.
fn shift_for(probabilities: &[f64], effect: f64) -> Option<f64> {
    let gain = |c: f64| {
        probabilities
            .iter()
            .map(|p| (p + c).min(1.0) - p)
            .sum::<f64>()
            / probabilities.len() as f64
    };
    if gain(1.0) < effect {
        return None;
    }
    let (mut low, mut high) = (0.0, 1.0);
    for _ in 0..60 {
        let middle = 0.5 * (low + high);
        if gain(middle) < effect {
            low = middle;
        } else {
            high = middle;
        }
    }
    Some(high)
}

/// Sample `s` of category `c`, in one arm and repeat.
fn outcome(c: usize, s: usize, arm: Arm, repeat: u32, passed: bool) -> Outcome {
    Outcome {
        sample_id: format!("c{c}-{s}"),
        category: category_name(c),
        arm,
        repeat,
        passed,
        failed_laws: Vec::new(),
        applied_laws: Vec::new(),
        gapped: false,
        errored: false,
    }
}

/// One simulated run's outcomes, with `effect` (a mean rise in pass probability) planted in
/// the variant arm of category [`PLANTED`].
fn simulated_run(rng: &mut Rng, effect: f64) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for (c, &size) in CATEGORY_SIZES.iter().enumerate() {
        let (baseline, variant) = loop {
            let baseline: Vec<f64> = (0..size).map(|_| pass_probability(rng)).collect();
            if c != PLANTED || effect == 0.0 {
                break (baseline.clone(), baseline);
            }
            if let Some(shift) = shift_for(&baseline, effect) {
                let variant = baseline.iter().map(|p| (p + shift).min(1.0)).collect();
                break (baseline, variant);
            }
        };
        for s in 0..size {
            for repeat in 0..REPEATS {
                for (arm, p) in [(Arm::Baseline, baseline[s]), (Arm::Variant(0), variant[s])] {
                    outcomes.push(outcome(c, s, arm, repeat, rng.unit() < p));
                }
            }
        }
    }
    outcomes
}

/// A simulated run's wording comparison, with the power model behind each row's MDE.
struct Run {
    comparison: Comparison,
    powers: Powers,
}

fn wording(outcomes: &[Outcome]) -> Run {
    let (comparison, powers) = compare_many_with_power_at(
        outcomes,
        &["wording".to_string()],
        Arm::Baseline,
        &[Arm::Variant(0)],
        EFFORT,
    )
    .expect("consistent outcomes")
    .remove(0);
    Run { comparison, powers }
}

fn planted(run: &Run) -> &Row {
    &run.comparison.categories[PLANTED]
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn with_no_effect_at_most_five_percent_of_runs_call_any_row() {
    // 1 000 runs: at a true rate of 5% the bound would be crossed by chance in about half of
    // the draws; a rate near 5% would show as about 50 calls.
    let runs = 1_000;
    let mut rng = Rng::new(20_260_515);
    let mut called = 0;
    for _ in 0..runs {
        let comparison = wording(&simulated_run(&mut rng, 0.0)).comparison;
        assert_eq!(comparison.categories.len(), 10);
        if comparison.rows().any(Row::changed) {
            called += 1;
        }
    }
    let rate = called as f64 / runs as f64;
    eprintln!("no effect: {called} of {runs} runs called some row ({rate:.3})");
    assert!(rate <= 0.05, "false verdicts in {rate} of runs");
}

/// Mean reported MDE of the planted category, and the share of runs calling it better.
fn planted_figures(runs: &[Run]) -> (f64, f64) {
    let mean_mde = runs
        .iter()
        .map(|c| planted(c).mde.expect("15 samples give an MDE"))
        .sum::<f64>()
        / runs.len() as f64;
    (mean_mde, found_share(runs))
}

/// The share of runs whose verdict calls the planted category better.
fn found_share(runs: &[Run]) -> f64 {
    let better = runs
        .iter()
        .filter(|c| planted(c).verdict == Verdict::Better)
        .count();
    better as f64 / runs.len() as f64
}

/// Runs with `effect` planted: the share that found it, and the mean power their reports
/// promise for it, over the runs whose rates leave room for such a change (the pooled rates
/// of a run already carry half its effect, and a report promises nothing for a change its
/// rates leave no room for); also how many runs that is.
fn found_and_promised(rng: &mut Rng, effect: f64, count: usize) -> (f64, f64, usize) {
    let runs: Vec<(Run, f64)> = (0..count)
        .map(|_| wording(&simulated_run(rng, effect)))
        .filter_map(|run| {
            let promised = run.powers.categories[PLANTED].power(effect)?;
            Some((run, promised))
        })
        .collect();
    let promised = runs.iter().map(|(_, p)| p).sum::<f64>() / runs.len() as f64;
    let runs: Vec<Run> = runs.into_iter().map(|(run, _)| run).collect();
    (found_share(&runs), promised, runs.len())
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_planted_25_pp_is_found_as_often_as_the_reports_promise() {
    // 1 000 runs: the found share at about 25% has a standard error of 1.4 points, so ±5
    // leaves room for more than three of them besides any error of the promise.
    let mut rng = Rng::new(25);
    let (found, promised, counted) = found_and_promised(&mut rng, 0.25, 1_000);
    eprintln!("effect 0.25: found {found:.3}, promised {promised:.3} ({counted} runs)");
    assert!(
        counted >= 800,
        "only {counted} of 1000 reports leave room for +25 pp"
    );
    assert!(
        (found - promised).abs() <= 0.05,
        "found in {found}, promised {promised}"
    );
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn an_effect_as_large_as_the_reported_mde_is_found_about_80_percent_of_the_time() {
    // The MDE rests on the rates observed under the effect, which move with it. Start near
    // the MDE such runs report and move the planted effect to the MDE the runs report, until
    // the two agree: that effect is what a user reading "no change ≥ X pp" is promised 80%
    // power at.
    let mut rng = Rng::new(7);
    let mut effect = 0.40;
    for step in 0..2 {
        let pilot: Vec<Run> = (0..200)
            .map(|_| wording(&simulated_run(&mut rng, effect)))
            .collect();
        let (mean_mde, found) = planted_figures(&pilot);
        eprintln!(
            "pilot {step}: effect {effect:.3}: reported MDE {mean_mde:.3}, \
             found in {found:.3} of runs"
        );
        effect = mean_mde;
    }

    // 1 000 runs: at 80% the found share has a standard error of 1.3 points; ±5 is about
    // four of them.
    let runs: Vec<Run> = (0..1_000)
        .map(|_| wording(&simulated_run(&mut rng, effect)))
        .collect();
    let (mean_mde, power) = planted_figures(&runs);
    let other_calls = runs
        .iter()
        .filter(|c| {
            c.comparison
                .categories
                .iter()
                .enumerate()
                .any(|(i, r)| i != PLANTED && r.changed())
        })
        .count();
    eprintln!(
        "effect {effect:.3}: reported MDE {mean_mde:.3}, found in {power:.3} of 1000 runs; \
         another category called in {other_calls}"
    );
    assert!(
        (mean_mde - effect).abs() < 0.02,
        "the runs report an MDE of {mean_mde}, not the planted {effect}"
    );
    // The MDE is computed at the level a row faces alone in its family, from the exact
    // sign-flip test; the verdict's step-down over the flips finds a little more (86% in 1,000
    // runs at seed 7). A promise on the safe side is allowed; one that overstates is not.
    assert!(
        (POWER - 0.05..=POWER + 0.08).contains(&power),
        "power {power} at the MDE"
    );
    assert!(other_calls as f64 / runs.len() as f64 <= 0.05);
}

#[test]
#[ignore = "diagnostic: prints the power curve"]
fn power_curve() {
    // The found share and the promise over the runs whose rates leave room for the change,
    // and the mean MDE over all runs.
    let mut rng = Rng::new(99);
    for effect in [0.25, 0.3, 0.35, 0.4] {
        let (found, promised, counted) = found_and_promised(&mut rng, effect, 300);
        let runs: Vec<Run> = (0..300)
            .map(|_| wording(&simulated_run(&mut rng, effect)))
            .collect();
        let (mde, found_all) = planted_figures(&runs);
        eprintln!(
            "effect {effect}: found {found:.3}, promised {promised:.3} ({counted} of 300 runs \
             with room); over 300 other runs found {found_all:.3}, mean MDE {mde:.3}"
        );
    }
}

#[test]
#[ignore = "diagnostic: where the simulated MDE and the t-test formula's agree"]
fn simulated_and_formula_mde_by_row_size() {
    use skilleval::eval::stats::method::{self, PowerModel};
    let mut rng = Rng::new(5);
    let m = REPEATS as usize;
    for level in [0.005, 0.05] {
        for n in [15, 20, 30, 45, 60, 100] {
            let rows = 30;
            let (mut simulated, mut formula) = (0.0, 0.0);
            for row in 0..rows {
                let counts: Vec<(usize, usize, usize)> = (0..n)
                    .map(|_| {
                        let p = pass_probability(&mut rng);
                        let mut passes = || (0..m).filter(|_| rng.unit() < p).count();
                        (passes(), passes(), m)
                    })
                    .collect();
                let d: Vec<f64> = counts
                    .iter()
                    .map(|&(r, t, m)| (t as f64 - r as f64) / m as f64)
                    .collect();
                let (_, variance) = method::mean_and_variance(&d);
                let step = 2.0 / (n * m) as f64;
                formula +=
                    method::detectable_effect(n, variance.unwrap(), n - 1, step, level, POWER)
                        .unwrap_or(1.0);
                simulated += PowerModel::new(&counts, level, row as u64)
                    .detectable_effect(POWER)
                    .unwrap_or(1.0);
            }
            eprintln!(
                "level {level}, {n} samples: simulated MDE {:.3}, formula {:.3}",
                simulated / rows as f64,
                formula / rows as f64
            );
        }
    }
}

/// A run with `variants` variant arms and no effect anywhere: every arm of a sample shares its
/// pass probability.
fn null_run_with_variants(rng: &mut Rng, variants: usize) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for (c, &size) in CATEGORY_SIZES.iter().enumerate() {
        for s in 0..size {
            let p = pass_probability(rng);
            for repeat in 0..REPEATS {
                for arm in std::iter::once(Arm::Baseline).chain((0..variants).map(Arm::variant)) {
                    outcomes.push(outcome(c, s, arm, repeat, rng.unit() < p));
                }
            }
        }
    }
    outcomes
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn several_variants_share_one_error_budget() {
    // Four variants and no effect: at most 5% of runs call any row (category, total or law,
    // on either outcome) of any variant; each variant's family has α/4, and a variant's raw p
    // is the same as when it is compared alone.
    const VARIANTS: usize = 4;
    let runs: usize = 400;
    let mut rng = Rng::new(20_261_201);
    let treatments: Vec<Arm> = (0..VARIANTS).map(Arm::variant).collect();
    let names: Vec<String> = treatments.iter().map(|a| a.name().to_string()).collect();
    let effort = Effort {
        power: false,
        ..EFFORT
    };
    let (mut called, mut alone_called) = (0, 0);
    for _ in 0..runs {
        let outcomes = null_run_with_variants(&mut rng, VARIANTS);
        let joint =
            compare_many_with_power_at(&outcomes, &names, Arm::Baseline, &treatments, effort)
                .unwrap();
        if joint.iter().any(|(c, _)| c.rows().any(Row::changed)) {
            called += 1;
        }
        let mut any_alone = false;
        for ((comparison, _), (&arm, name)) in joint.iter().zip(treatments.iter().zip(&names)) {
            let alone = compare_many_with_power_at(
                &outcomes,
                std::slice::from_ref(name),
                Arm::Baseline,
                &[arm],
                effort,
            )
            .unwrap()
            .remove(0)
            .0;
            any_alone |= alone.rows().any(Row::changed);
            for (row, own) in comparison.categories.iter().zip(&alone.categories) {
                assert_eq!(row.p_value, own.p_value, "the raw test is the same");
                assert!(row.p_adjusted >= own.p_adjusted - 1e-12, "{}", row.name);
            }
        }
        alone_called += usize::from(any_alone);
    }
    let rate = called as f64 / runs as f64;
    eprintln!(
        "{VARIANTS} variants, no effect: {called} of {runs} runs called some row of some \
         variant ({rate:.3}); each variant compared alone, {alone_called} runs ({:.3})",
        alone_called as f64 / runs as f64
    );
    assert!(rate <= 0.05, "false verdicts in {rate} of runs");
    assert!(alone_called > called, "alone, each variant has the whole α");
}
