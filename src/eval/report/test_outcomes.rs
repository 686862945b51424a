//! Outcomes of known shape for the report tests: four categories that are clearly better,
//! clearly worse, flaky in both arms, and gapped on one side.

use crate::eval::arm::Arm;
use crate::eval::stats::{summarize, Outcome, Summary};

/// Laws that fail in a failing run of each category; `names-the-city` applies everywhere.
pub fn laws_of(category: &str) -> (Vec<String>, Vec<String>) {
    let applied = match category {
        "plain_city" => vec!["calls-weather-with-place-as-written", "names-the-city"],
        _ => vec!["names-the-city", "no-unsupported-numbers"],
    };
    let failing = match category {
        "plain_city" => vec!["calls-weather-with-place-as-written"],
        _ => vec!["no-unsupported-numbers", "names-the-city"],
    };
    let own = |v: Vec<&str>| v.into_iter().map(String::from).collect();
    (own(applied), own(failing))
}

/// Every arm of one (sample, repeat): (control, baseline, variant) passes.
pub fn push_units(
    outcomes: &mut Vec<Outcome>,
    (category, sample, repeat): (&str, usize, u32),
    passes: [bool; 3],
    variant_gapped: bool,
) {
    let (applied, failing) = laws_of(category);
    let arms = [Arm::Control, Arm::Baseline, Arm::Variant(0)];
    for (arm, passed) in arms.into_iter().zip(passes) {
        outcomes.push(Outcome {
            sample_id: format!("{category}-{sample:02}"),
            category: category.to_string(),
            arm,
            repeat,
            passed,
            failed_laws: if passed { vec![] } else { failing.clone() },
            applied_laws: applied.clone(),
            gapped: variant_gapped && arm == Arm::Variant(0),
            errored: false,
        });
    }
}

/// Four categories with known shapes: clearly better, clearly worse, flaky A/A, gapped.
/// The control arm fails 10 of the 12 city_country samples the baseline passes: there the
/// skill's body matters.
pub fn known_outcomes(control_like_baseline: bool) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for repeat in 0..3 {
        for sample in 0..12 {
            // The variant fixes 9 of 12 samples that always failed.
            let baseline = sample < 3;
            push_units(
                &mut outcomes,
                ("plain_city", sample, repeat),
                [baseline, baseline, true],
                false,
            );
            // The variant breaks 10 of 12 samples.
            let control = control_like_baseline || sample >= 10;
            push_units(
                &mut outcomes,
                ("city_country", sample, repeat),
                [control, true, sample < 2],
                false,
            );
        }
        for sample in 0..6 {
            // Flaky in both arms, in different repeats.
            let step = sample * (repeat as usize + 1);
            let (baseline, variant) = (!step.is_multiple_of(4), !(step + 1).is_multiple_of(4));
            push_units(
                &mut outcomes,
                ("chitchat", sample, repeat),
                [baseline, baseline, variant],
                false,
            );
            // Two samples lack fixtures on the variant side.
            let passes = sample.is_multiple_of(2);
            push_units(
                &mut outcomes,
                ("rare_place", sample, repeat),
                [passes, passes, passes],
                sample < 2,
            );
        }
    }
    outcomes
}

pub fn known_summary() -> Summary {
    summarize(&known_outcomes(false)).expect("fixture outcomes are consistent")
}
