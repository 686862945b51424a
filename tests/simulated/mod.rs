//! Runs shaped like a weather run on the default model, simulated with a known truth (no
//! model): four categories of 14–15 samples, five laws per sample, each with its own chance of
//! holding, so that a sample passes every law only 10–25% of the time, as the weather categories
//! do. Shapes plant an effect in the first variant. Shared by the simulations of the verdicts.

#![allow(dead_code)] // each simulation uses the shapes it needs

use skilleval::eval::arm::Arm;
use skilleval::eval::stats::method::Rng;
use skilleval::eval::stats::{Outcome, Verdict};

pub const CATEGORIES: [(&str, usize); 4] = [
    ("plain_city", 15),
    ("city_country", 15),
    ("city_us_state", 14),
    ("not_weather", 14),
];
pub const LAWS: [&str; 5] = [
    "calls-tool",
    "passes-place",
    "names-place",
    "reports-result",
    "no-invention",
];
/// The mean chance each law holds on a sample of the baseline.
pub const LAW_MEANS: [f64; 5] = [0.93, 0.5, 0.6, 0.6, 0.9];

/// A probability near `mean`, with the spread of real samples: some sure, some in between.
pub fn near(rng: &mut Rng, mean: f64) -> f64 {
    let u = rng.unit();
    if u < 0.5 {
        mean
    } else if u < 0.75 {
        (mean + (1.0 - mean) * rng.unit()).min(1.0)
    } else {
        mean * rng.unit()
    }
}

/// Per sample: the chance each law holds.
pub type Sample = [f64; 5];

/// What a shape does to a variant: the probabilities of a sample of a category.
pub type Plant = fn(category: usize, sample: usize, probabilities: &mut Sample);

pub struct Shape {
    pub name: &'static str,
    pub plant: Plant,
    /// Rows (a category, `total`, or a law) that the plant moves, and the direction.
    pub truth: &'static [(&'static str, Verdict)],
}

fn no_effect(_: usize, _: usize, _: &mut Sample) {}

/// The examples answer from memory: no call, nothing reported, in every weather category.
fn tool_free(category: usize, _: usize, p: &mut Sample) {
    if category < 3 {
        p[0] = 0.0;
        p[1] = 0.0;
        p[3] = 0.0;
    }
}

/// The examples drop the place from the answer: `names-place` almost never holds.
fn drops_place(_: usize, _: usize, p: &mut Sample) {
    p[2] = 0.04;
}

/// An even rise of one law in one category: every sample's chance of reporting the result
/// rises by a quarter (clipped).
fn even_rise(category: usize, _: usize, p: &mut Sample) {
    if category == 0 {
        p[3] = (p[3] + 0.25).min(1.0);
    }
}

/// An even rise everywhere: every sample of every category reports the result a third more
/// often (clipped).
fn even_rise_everywhere(_: usize, _: usize, p: &mut Sample) {
    p[3] = (p[3] + 0.35).min(1.0);
}

/// Concentrated: five prompts of one category are fixed outright; the rest are untouched.
fn few_fixed(category: usize, sample: usize, p: &mut Sample) {
    if category == 1 && sample < 5 {
        *p = [1.0; 5];
    }
}

/// A drop near a low baseline: one category stops passing the place as written.
fn low_baseline_drop(category: usize, _: usize, p: &mut Sample) {
    if category == 2 {
        p[1] = 0.0;
    }
}

pub const SHAPES: [Shape; 7] = [
    Shape {
        name: "no effect",
        plant: no_effect,
        truth: &[],
    },
    Shape {
        name: "tool-free (3 categories lose 3 laws)",
        plant: tool_free,
        truth: &[
            ("plain_city", Verdict::Worse),
            ("city_country", Verdict::Worse),
            ("city_us_state", Verdict::Worse),
            ("calls-tool", Verdict::Worse),
            ("passes-place", Verdict::Worse),
            ("reports-result", Verdict::Worse),
            ("total", Verdict::Worse),
        ],
    },
    Shape {
        name: "drops the place (one law everywhere)",
        plant: drops_place,
        truth: &[
            ("plain_city", Verdict::Worse),
            ("city_country", Verdict::Worse),
            ("city_us_state", Verdict::Worse),
            ("not_weather", Verdict::Worse),
            ("names-place", Verdict::Worse),
            ("total", Verdict::Worse),
        ],
    },
    Shape {
        name: "even rise (+25 pp on one law, one category)",
        plant: even_rise,
        truth: &[
            ("plain_city", Verdict::Better),
            ("reports-result", Verdict::Better),
            ("total", Verdict::Better),
        ],
    },
    Shape {
        name: "even rise everywhere (+35 pp on one law)",
        plant: even_rise_everywhere,
        truth: &[
            ("plain_city", Verdict::Better),
            ("city_country", Verdict::Better),
            ("city_us_state", Verdict::Better),
            ("not_weather", Verdict::Better),
            ("reports-result", Verdict::Better),
            ("total", Verdict::Better),
        ],
    },
    Shape {
        name: "concentrated (5 prompts of one category fixed)",
        plant: few_fixed,
        truth: &[
            ("city_country", Verdict::Better),
            ("calls-tool", Verdict::Better),
            ("passes-place", Verdict::Better),
            ("names-place", Verdict::Better),
            ("reports-result", Verdict::Better),
            ("no-invention", Verdict::Better),
            ("total", Verdict::Better),
        ],
    },
    Shape {
        name: "drop near a low baseline (one category, one law)",
        plant: low_baseline_drop,
        truth: &[
            ("city_us_state", Verdict::Worse),
            ("passes-place", Verdict::Worse),
            ("total", Verdict::Worse),
        ],
    },
];

/// One run of `repeats`: the baseline and the variants, the first carrying the shape, the
/// `unshaped` others none (as in a run of several wordings where most do nothing).
pub fn simulated_run(rng: &mut Rng, plant: Plant, repeats: u32, unshaped: usize) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for (c, &(category, size)) in CATEGORIES.iter().enumerate() {
        for s in 0..size {
            let mut baseline: Sample = [0.0; 5];
            for (slot, mean) in baseline.iter_mut().zip(LAW_MEANS) {
                *slot = near(rng, mean);
            }
            let mut planted = baseline;
            plant(c, s, &mut planted);
            for repeat in 0..repeats {
                let arms = [(Arm::Baseline, baseline), (Arm::variant(0), planted)]
                    .into_iter()
                    .chain((1..=unshaped).map(|v| (Arm::variant(v), baseline)));
                for (arm, probabilities) in arms {
                    let failed: Vec<String> = LAWS
                        .iter()
                        .zip(probabilities)
                        .filter(|&(_, p)| rng.unit() >= p)
                        .map(|(law, _)| law.to_string())
                        .collect();
                    outcomes.push(Outcome {
                        sample_id: format!("{category}-{s}"),
                        category: category.to_string(),
                        arm,
                        repeat,
                        passed: failed.is_empty(),
                        failed_laws: failed,
                        applied_laws: LAWS.iter().map(|l| l.to_string()).collect(),
                        gapped: false,
                        errored: false,
                    });
                }
            }
        }
    }
    outcomes
}
