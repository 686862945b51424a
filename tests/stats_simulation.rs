//! The statistics against simulated runs with a known truth, no model: runs shaped like the
//! weather corpus (10 categories of 14–15 samples, 3 repeats), each sample with its own pass
//! probability drawn from a spread like real runs' (many samples that nearly always pass or
//! fail, some in between), shared by both arms unless an effect is planted.
//!
//! Checked: with no effect, a run calls some category better or worse in at most 5% of runs
//! (Holm's promise); with an effect planted in one category of 15 samples, the share of runs
//! that call it better matches the power the run's own MDE promises.

use skilleval::eval::stats::method::{self, Rng};
use skilleval::eval::stats::{compare, Arm, Comparison, Outcome, Row, Verdict, POWER};

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
                for (arm, p) in [(Arm::Baseline, baseline[s]), (Arm::Variant, variant[s])] {
                    outcomes.push(Outcome {
                        sample_id: format!("c{c}-{s}"),
                        category: category_name(c),
                        arm,
                        repeat,
                        passed: rng.unit() < p,
                        failed_laws: Vec::new(),
                        applied_laws: Vec::new(),
                        gapped: false,
                        errored: false,
                    });
                }
            }
        }
    }
    outcomes
}

fn wording(outcomes: &[Outcome]) -> Comparison {
    compare(outcomes, "wording", Arm::Baseline, Arm::Variant).expect("consistent outcomes")
}

fn planted(comparison: &Comparison) -> &Row {
    &comparison.categories[PLANTED]
}

/// The power a row's own figures promise for a true effect (the approximation its MDE rests on).
fn promised_power(row: &Row, effect: f64) -> f64 {
    let variance = row.variance.expect("a variance");
    let df = row.degrees_of_freedom;
    method::promised_power(row.samples, variance, df, row.step, row.level, effect)
}

#[test]
fn with_no_effect_at_most_five_percent_of_runs_call_a_category() {
    let runs = 2_000;
    let mut rng = Rng::new(20_260_515);
    let mut called = 0;
    for _ in 0..runs {
        let comparison = wording(&simulated_run(&mut rng, 0.0));
        assert_eq!(comparison.categories.len(), 10);
        if comparison.categories.iter().any(Row::changed) {
            called += 1;
        }
    }
    let rate = called as f64 / runs as f64;
    eprintln!("no effect: {called} of {runs} runs called some category ({rate:.3})");
    assert!(rate <= 0.05, "false verdicts in {rate} of runs");
}

/// Mean reported MDE of the planted category, and the share of runs calling it better.
fn planted_figures(runs: &[Comparison]) -> (f64, f64) {
    let mean_mde = runs
        .iter()
        .map(|c| planted(c).mde.expect("15 samples give an MDE"))
        .sum::<f64>()
        / runs.len() as f64;
    let better = runs
        .iter()
        .filter(|c| planted(c).verdict == Verdict::Better)
        .count();
    (mean_mde, better as f64 / runs.len() as f64)
}

#[test]
fn an_effect_as_large_as_the_reported_mde_is_found_about_80_percent_of_the_time() {
    // The MDE rests on the variance observed under the effect, which grows with the effect.
    // Start at +25 pp and move the planted effect to the MDE the runs report, until the two
    // agree: that effect is what a user reading "no change ≥ X pp" is promised 80% power at.
    let mut rng = Rng::new(7);
    let mut effect = 0.25;
    for step in 0..3 {
        let pilot: Vec<Comparison> = (0..300)
            .map(|_| wording(&simulated_run(&mut rng, effect)))
            .collect();
        let (mean_mde, found) = planted_figures(&pilot);
        let promised = pilot
            .iter()
            .map(|c| promised_power(planted(c), effect))
            .sum::<f64>()
            / 300.0;
        eprintln!(
            "pilot {step}: effect {effect:.3}: reported MDE {mean_mde:.3}, \
             found in {found:.3} of runs (promised {promised:.3})"
        );
        effect = mean_mde;
    }

    let runs: Vec<Comparison> = (0..2_000)
        .map(|_| wording(&simulated_run(&mut rng, effect)))
        .collect();
    let (mean_mde, power) = planted_figures(&runs);
    let other_calls = runs
        .iter()
        .filter(|c| {
            c.categories
                .iter()
                .enumerate()
                .any(|(i, r)| i != PLANTED && r.changed())
        })
        .count();
    eprintln!(
        "effect {effect:.3}: reported MDE {mean_mde:.3}, found in {power:.3} of 2000 runs; \
         another category called in {other_calls}"
    );
    assert!(
        (mean_mde - effect).abs() < 0.02,
        "the runs report an MDE of {mean_mde}, not the planted {effect}"
    );
    assert!((power - POWER).abs() <= 0.05, "power {power} at the MDE");
    assert!(other_calls as f64 / runs.len() as f64 <= 0.05);
}

#[test]
#[ignore = "diagnostic: prints the power curve"]
fn power_curve() {
    let mut rng = Rng::new(99);
    for effect in [0.2, 0.3, 0.4, 0.5, 0.6] {
        let runs: Vec<Comparison> = (0..300)
            .map(|_| wording(&simulated_run(&mut rng, effect)))
            .collect();
        let found = runs
            .iter()
            .filter(|c| planted(c).verdict == Verdict::Better)
            .count() as f64
            / runs.len() as f64;
        let promised = runs
            .iter()
            .map(|c| promised_power(planted(c), effect))
            .sum::<f64>()
            / runs.len() as f64;
        let mde = runs.iter().filter_map(|c| planted(c).mde).sum::<f64>() / runs.len() as f64;
        let nonzero = runs.iter().map(|c| planted(c).p_value).sum::<f64>() / runs.len() as f64;
        eprintln!("effect {effect}: found {found:.3} promised {promised:.3} mean mde {mde:.3} mean p {nonzero:.3}");
    }
}
