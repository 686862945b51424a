//! Paired comparison of a baseline and a variant wording, per category and in total.
//!
//! # Method
//!
//! Each (sample, repeat) is run under both arms, so outcomes are compared in pairs. A pair
//! where either side hit a fixture gap, or whose partner is missing, is excluded from every
//! rate and from the test; gapped pairs are counted per category. An errored run counts as
//! a failure: a wording that makes the loop break has not behaved well.
//!
//! **Test: exact two-sided sign test on per-sample differences.** For each sample, the
//! variant's passes over its scored repeats are compared with the baseline's; samples where
//! the variant passed more often count for the variant, the reverse against it, ties drop
//! out; the p-value is the exact binomial (n = untied samples, ½) two-sided tail.
//! With one repeat this *is* the exact McNemar test on discordant pairs. With several it is
//! its clustered form: repeats of one sample are not independent (under greedy decoding they
//! are identical), so treating each (sample, repeat) as its own McNemar pair would multiply
//! the evidence by the number of repeats and call noise significant. The pair-level
//! discordant counts are still reported for reading.
//!
//! **Noise band.** Each arm's pass rate is computed per repeat; the band is the min–max over
//! repeats. **Verdict:** `better` when p < [`ALPHA`] *and* the variant's band lies wholly
//! above the baseline's (every variant repeat beat every baseline repeat); `worse`
//! symmetrically; otherwise `within_noise`; `no_data` when no pair could be scored.
//! An A/A run under greedy decoding gives both arms the same outcomes: no untied samples,
//! equal bands, always `within_noise`. With sampling its arms drift apart by chance, which is
//! what it is for: a `better` or `worse` there shows how often noise alone reaches a verdict.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Significance level for the sign test.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    Baseline,
    Variant,
}

impl Arm {
    pub fn name(self) -> &'static str {
        match self {
            Arm::Baseline => "baseline",
            Arm::Variant => "variant",
        }
    }
}

/// The judged result of one run: one sample, under one arm, in one repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub sample_id: String,
    pub category: String,
    pub arm: Arm,
    pub repeat: u32,
    pub passed: bool,
    #[serde(default)]
    pub failed_laws: Vec<String>,
    /// A fixture was missing: the run says nothing about the wording.
    #[serde(default)]
    pub gapped: bool,
    /// The run failed (backend or loop error).
    #[serde(default)]
    pub errored: bool,
}

impl Outcome {
    fn scored_pass(&self) -> bool {
        self.passed && !self.errored
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    WithinNoise,
    NoData,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::NoData => "no data",
        }
    }
}

/// Lowest and highest per-repeat pass rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Band {
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    /// Passes over scored runs (the mean of per-repeat rates, weighted by scored runs).
    pub rate: Option<f64>,
    pub band: Option<Band>,
    pub passes: usize,
    pub runs: usize,
    pub errored: usize,
    /// Samples that passed in every scored repeat.
    pub always_pass: usize,
    pub always_fail: usize,
    /// Samples that both passed and failed across repeats.
    pub flaky: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySummary {
    pub category: String,
    /// Samples with at least one scored pair.
    pub samples: usize,
    /// Scored (sample, repeat) pairs.
    pub pairs: usize,
    pub baseline: ArmSummary,
    pub variant: ArmSummary,
    /// Variant rate minus baseline rate.
    pub delta: Option<f64>,
    /// Pairs where only the baseline passed.
    pub pairs_baseline_only: usize,
    /// Pairs where only the variant passed.
    pub pairs_variant_only: usize,
    /// Samples the variant passed more often than the baseline.
    pub samples_variant_ahead: usize,
    pub samples_baseline_ahead: usize,
    pub p_value: f64,
    pub verdict: Verdict,
    /// Pairs excluded because either side hit a fixture gap.
    pub gapped_pairs: usize,
    /// Runs excluded because their partner run is missing.
    pub unpaired_runs: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LawFailures {
    pub law: String,
    /// Scored runs of each arm in which the law failed.
    pub baseline: usize,
    pub variant: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlakySample {
    pub sample_id: String,
    pub category: String,
    pub arm: Arm,
    pub passes: usize,
    pub runs: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub alpha: f64,
    pub repeats: usize,
    /// Sorted by category name.
    pub categories: Vec<CategorySummary>,
    pub total: CategorySummary,
    /// Most failed first.
    pub law_failures: Vec<LawFailures>,
    pub flaky_samples: Vec<FlakySample>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StatsError {
    #[error("sample `{sample_id}` has two {arm} outcomes for repeat {repeat}")]
    Duplicate {
        sample_id: String,
        arm: &'static str,
        repeat: u32,
    },
    #[error("sample `{sample_id}` appears in categories `{first}` and `{second}`")]
    CategoryClash {
        sample_id: String,
        first: String,
        second: String,
    },
}

/// Both arms of one (sample, repeat), as far as they were run.
#[derive(Default)]
struct Pair<'a> {
    baseline: Option<&'a Outcome>,
    variant: Option<&'a Outcome>,
}

/// A pair both of whose runs count.
struct ScoredPair<'a> {
    sample_id: &'a str,
    repeat: u32,
    baseline: &'a Outcome,
    variant: &'a Outcome,
}

/// Pairs of one category (or of all), with what was excluded.
#[derive(Default)]
struct Group<'a> {
    scored: Vec<ScoredPair<'a>>,
    gapped_pairs: usize,
    unpaired_runs: usize,
}

pub fn summarize(outcomes: &[Outcome]) -> Result<Summary, StatsError> {
    let pairs = pair_up(outcomes)?;
    let mut by_category: BTreeMap<&str, Group> = BTreeMap::new();
    let mut total = Group::default();
    for ((category, sample_id, repeat), pair) in &pairs {
        let group = by_category.entry(category).or_default();
        for group in [group, &mut total] {
            match (pair.baseline, pair.variant) {
                (Some(b), Some(v)) if b.gapped || v.gapped => group.gapped_pairs += 1,
                (Some(baseline), Some(variant)) => group.scored.push(ScoredPair {
                    sample_id,
                    repeat: *repeat,
                    baseline,
                    variant,
                }),
                _ => group.unpaired_runs += 1,
            }
        }
    }
    let repeats: BTreeSet<u32> = outcomes.iter().map(|o| o.repeat).collect();
    Ok(Summary {
        alpha: ALPHA,
        repeats: repeats.len(),
        categories: by_category
            .iter()
            .map(|(category, group)| summarize_group(category, group))
            .collect(),
        total: summarize_group("total", &total),
        law_failures: law_failures(&total),
        flaky_samples: flaky_samples(&by_category),
    })
}

type PairKey<'a> = (&'a str, &'a str, u32);

fn pair_up(outcomes: &[Outcome]) -> Result<BTreeMap<PairKey<'_>, Pair<'_>>, StatsError> {
    let mut category_of: BTreeMap<&str, &str> = BTreeMap::new();
    let mut pairs: BTreeMap<PairKey, Pair> = BTreeMap::new();
    for outcome in outcomes {
        let category = *category_of
            .entry(&outcome.sample_id)
            .or_insert(&outcome.category);
        if category != outcome.category {
            return Err(StatsError::CategoryClash {
                sample_id: outcome.sample_id.clone(),
                first: category.to_string(),
                second: outcome.category.clone(),
            });
        }
        let pair = pairs
            .entry((category, &outcome.sample_id, outcome.repeat))
            .or_default();
        let slot = match outcome.arm {
            Arm::Baseline => &mut pair.baseline,
            Arm::Variant => &mut pair.variant,
        };
        if slot.replace(outcome).is_some() {
            return Err(StatsError::Duplicate {
                sample_id: outcome.sample_id.clone(),
                arm: outcome.arm.name(),
                repeat: outcome.repeat,
            });
        }
    }
    Ok(pairs)
}

fn summarize_group(category: &str, group: &Group) -> CategorySummary {
    let baseline = arm_summary(group, Arm::Baseline);
    let variant = arm_summary(group, Arm::Variant);
    let delta = baseline.rate.zip(variant.rate).map(|(b, v)| v - b);

    let pairs_baseline_only = group
        .scored
        .iter()
        .filter(|p| p.baseline.scored_pass() && !p.variant.scored_pass())
        .count();
    let pairs_variant_only = group
        .scored
        .iter()
        .filter(|p| !p.baseline.scored_pass() && p.variant.scored_pass())
        .count();

    let mut lead_by_sample: BTreeMap<&str, i64> = BTreeMap::new();
    for pair in &group.scored {
        let lead = i64::from(pair.variant.scored_pass()) - i64::from(pair.baseline.scored_pass());
        *lead_by_sample.entry(pair.sample_id).or_default() += lead;
    }
    let samples_variant_ahead = lead_by_sample.values().filter(|&&d| d > 0).count();
    let samples_baseline_ahead = lead_by_sample.values().filter(|&&d| d < 0).count();
    let p_value = exact_binomial_two_sided(samples_variant_ahead, samples_baseline_ahead);

    CategorySummary {
        category: category.to_string(),
        samples: lead_by_sample.len(),
        pairs: group.scored.len(),
        verdict: verdict(&baseline, &variant, p_value),
        baseline,
        variant,
        delta,
        pairs_baseline_only,
        pairs_variant_only,
        samples_variant_ahead,
        samples_baseline_ahead,
        p_value,
        gapped_pairs: group.gapped_pairs,
        unpaired_runs: group.unpaired_runs,
    }
}

/// The rule documented at the top of this module.
fn verdict(baseline: &ArmSummary, variant: &ArmSummary, p_value: f64) -> Verdict {
    let (Some(base_band), Some(var_band)) = (baseline.band, variant.band) else {
        return Verdict::NoData;
    };
    if p_value >= ALPHA {
        Verdict::WithinNoise
    } else if var_band.min > base_band.max {
        Verdict::Better
    } else if var_band.max < base_band.min {
        Verdict::Worse
    } else {
        Verdict::WithinNoise
    }
}

fn arm_outcome<'a>(pair: &ScoredPair<'a>, arm: Arm) -> &'a Outcome {
    match arm {
        Arm::Baseline => pair.baseline,
        Arm::Variant => pair.variant,
    }
}

fn arm_summary(group: &Group, arm: Arm) -> ArmSummary {
    let mut per_repeat: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    let mut per_sample: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut errored = 0;
    for pair in &group.scored {
        let outcome = arm_outcome(pair, arm);
        let passed = usize::from(outcome.scored_pass());
        for tally in [
            per_repeat.entry(pair.repeat).or_default(),
            per_sample.entry(pair.sample_id).or_default(),
        ] {
            tally.0 += passed;
            tally.1 += 1;
        }
        errored += usize::from(outcome.errored);
    }
    let passes: usize = per_repeat.values().map(|t| t.0).sum();
    let runs: usize = per_repeat.values().map(|t| t.1).sum();
    let repeat_rates: Vec<f64> = per_repeat
        .values()
        .map(|&(p, n)| p as f64 / n as f64)
        .collect();
    let band = (!repeat_rates.is_empty()).then(|| Band {
        min: repeat_rates.iter().copied().fold(f64::INFINITY, f64::min),
        max: repeat_rates
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max),
    });
    ArmSummary {
        rate: (runs > 0).then(|| passes as f64 / runs as f64),
        band,
        passes,
        runs,
        errored,
        always_pass: per_sample.values().filter(|&&(p, n)| p == n).count(),
        always_fail: per_sample.values().filter(|&&(p, _)| p == 0).count(),
        flaky: per_sample
            .values()
            .filter(|&&(p, n)| p > 0 && p < n)
            .count(),
    }
}

fn law_failures(total: &Group) -> Vec<LawFailures> {
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for pair in &total.scored {
        for law in &pair.baseline.failed_laws {
            counts.entry(law).or_default().0 += 1;
        }
        for law in &pair.variant.failed_laws {
            counts.entry(law).or_default().1 += 1;
        }
    }
    let mut failures: Vec<LawFailures> = counts
        .into_iter()
        .map(|(law, (baseline, variant))| LawFailures {
            law: law.to_string(),
            baseline,
            variant,
        })
        .collect();
    // Stable sort keeps the name order among equal counts.
    failures.sort_by_key(|f| std::cmp::Reverse(f.baseline + f.variant));
    failures
}

fn flaky_samples(by_category: &BTreeMap<&str, Group>) -> Vec<FlakySample> {
    let mut flaky = Vec::new();
    for (category, group) in by_category {
        for arm in [Arm::Baseline, Arm::Variant] {
            let mut per_sample: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
            for pair in &group.scored {
                let tally = per_sample.entry(pair.sample_id).or_default();
                tally.0 += usize::from(arm_outcome(pair, arm).scored_pass());
                tally.1 += 1;
            }
            flaky.extend(
                per_sample
                    .into_iter()
                    .filter(|&(_, (p, n))| p > 0 && p < n)
                    .map(|(sample_id, (passes, runs))| FlakySample {
                        sample_id: sample_id.to_string(),
                        category: category.to_string(),
                        arm,
                        passes,
                        runs,
                    }),
            );
        }
    }
    flaky.sort_by(|a, b| {
        (&a.category, &a.sample_id, a.arm).cmp(&(&b.category, &b.sample_id, b.arm))
    });
    flaky
}

/// Whether the variant is worse beyond noise in some category or in total: the condition
/// `--fail-on worse` stops on. The total counts too, since pooling categories can show a
/// regression no single category has the samples to show.
pub fn any_worse(summary: &Summary) -> bool {
    summary
        .categories
        .iter()
        .chain([&summary.total])
        .any(|c| c.verdict == Verdict::Worse)
}

/// Exact two-sided binomial test of `b` against `c` successes at p = ½: the McNemar exact
/// p-value when `b` and `c` are discordant pair counts. 1.0 when there is nothing to compare.
pub fn exact_binomial_two_sided(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    let tail = if n <= 120 {
        // Exact in integers: C(120, 60) < 2^117 fits u128.
        let mut coefficient: u128 = 1;
        let mut sum: u128 = 0;
        for i in 0..=k {
            sum += coefficient;
            coefficient = coefficient * (n - i) as u128 / (i + 1) as u128;
        }
        sum as f64 / 2f64.powi(n as i32)
    } else {
        // Log space avoids overflow of C(n, i) and underflow of 2^-n.
        let mut log_coefficient = 0.0_f64;
        let mut sum = 0.0;
        for i in 0..=k {
            sum += (log_coefficient - n as f64 * std::f64::consts::LN_2).exp();
            log_coefficient += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
        sum
    };
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(sample: &str, category: &str, arm: Arm, repeat: u32, passed: bool) -> Outcome {
        Outcome {
            sample_id: sample.into(),
            category: category.into(),
            arm,
            repeat,
            passed,
            failed_laws: if passed { vec![] } else { vec!["law-a".into()] },
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
                for arm in [Arm::Baseline, Arm::Variant] {
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

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn exact_binomial_matches_known_mcnemar_values() {
        assert_eq!(exact_binomial_two_sided(10, 0), 0.001953125);
        assert_eq!(exact_binomial_two_sided(0, 10), 0.001953125);
        assert_eq!(exact_binomial_two_sided(5, 5), 1.0);
        assert_eq!(exact_binomial_two_sided(0, 0), 1.0);
        // 2 * (1 + 12 + 66) / 4096
        assert_eq!(exact_binomial_two_sided(2, 10), 158.0 / 4096.0);
        assert_eq!(exact_binomial_two_sided(1, 1), 1.0);
    }

    #[test]
    fn the_log_path_agrees_with_the_exact_path_at_the_seam() {
        // n = 121 goes through logs; compare with n = 120 scaled by one Pascal step.
        let exact = exact_binomial_two_sided(50, 70);
        let logged = exact_binomial_two_sided(50, 71);
        assert!(
            logged < exact && logged > exact / 2.0,
            "{exact} vs {logged}"
        );
        assert!(close(exact_binomial_two_sided(100, 100), 1.0));
        assert!(exact_binomial_two_sided(0, 2000) < 1e-300);
    }

    #[test]
    fn ten_samples_fixed_by_the_variant_are_better() {
        let outcomes = runs("c", 10, 1, |_, _, arm| arm == Arm::Variant);
        let summary = summarize(&outcomes).unwrap();
        let c = &summary.categories[0];
        assert_eq!((c.samples, c.pairs), (10, 10));
        assert_eq!((c.pairs_variant_only, c.pairs_baseline_only), (10, 0));
        assert_eq!(c.p_value, 0.001953125);
        assert_eq!(c.delta, Some(1.0));
        assert_eq!(c.verdict, Verdict::Better);
        assert_eq!(summary.total.verdict, Verdict::Better);
    }

    #[test]
    fn repeats_of_one_sample_are_not_counted_as_independent_evidence() {
        // Four samples fixed, each seen in five identical repeats: 20 discordant pairs
        // but only four independent samples, which cannot reach significance.
        let outcomes = runs("c", 4, 5, |_, _, arm| arm == Arm::Variant);
        let c = &summarize(&outcomes).unwrap().categories[0];
        assert_eq!(c.pairs_variant_only, 20);
        assert_eq!(c.samples_variant_ahead, 4);
        assert_eq!(c.p_value, 0.125);
        assert_eq!(c.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn worse_is_the_mirror_of_better() {
        let outcomes = runs("c", 12, 1, |s, _, arm| arm == Arm::Baseline || s == 0);
        let c = &summarize(&outcomes).unwrap().categories[0];
        assert_eq!((c.samples_baseline_ahead, c.samples_variant_ahead), (11, 0));
        assert!(close(c.delta.unwrap(), -11.0 / 12.0));
        assert_eq!(c.verdict, Verdict::Worse);
    }

    #[test]
    fn an_a_a_run_is_within_noise_even_when_flaky() {
        // Same pseudo-random pass pattern in both arms.
        let outcomes = runs("c", 30, 3, |s, r, _| (s * 7 + r as usize * 3) % 5 < 3);
        let summary = summarize(&outcomes).unwrap();
        let c = &summary.total;
        assert_eq!(c.p_value, 1.0);
        assert_eq!(c.delta, Some(0.0));
        assert_eq!(c.verdict, Verdict::WithinNoise);
        assert_eq!(c.baseline.band, c.variant.band);
        assert!(c.baseline.flaky > 0);
    }

    #[test]
    fn bands_span_per_repeat_rates() {
        // Baseline passes 2, 3, 1 of 4 samples in repeats 0, 1, 2.
        let passing_per_repeat = [2, 3, 1];
        let outcomes = runs("c", 4, 3, |s, r, arm| match arm {
            Arm::Baseline => s < passing_per_repeat[r as usize],
            Arm::Variant => true,
        });
        let c = &summarize(&outcomes).unwrap().categories[0];
        assert_eq!(
            c.baseline.band,
            Some(Band {
                min: 0.25,
                max: 0.75
            })
        );
        assert_eq!(c.baseline.rate, Some(0.5));
        assert_eq!(c.variant.band, Some(Band { min: 1.0, max: 1.0 }));
        assert_eq!(
            (
                c.baseline.always_pass,
                c.baseline.always_fail,
                c.baseline.flaky
            ),
            (1, 1, 2)
        );
        assert_eq!(
            (
                c.variant.always_pass,
                c.variant.always_fail,
                c.variant.flaky
            ),
            (4, 0, 0)
        );
    }

    #[test]
    fn significant_but_overlapping_bands_stay_within_noise() {
        // 12 samples over 2 repeats. Variant wins every untied sample, but in repeat 0 the
        // baseline did as well as the variant does in repeat 1.
        let outcomes = runs("c", 12, 2, |s, r, arm| match (arm, r) {
            (Arm::Baseline, 0) => s < 6,
            (Arm::Baseline, _) => false,
            (Arm::Variant, 0) => true,
            (Arm::Variant, _) => s < 6,
        });
        let c = &summarize(&outcomes).unwrap().categories[0];
        assert!(c.p_value < ALPHA, "p = {}", c.p_value);
        assert_eq!(c.baseline.band, Some(Band { min: 0.0, max: 0.5 }));
        assert_eq!(c.variant.band, Some(Band { min: 0.5, max: 1.0 }));
        assert_eq!(c.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn gapped_and_unpaired_runs_are_excluded_and_counted() {
        let mut outcomes = runs("c", 10, 1, |_, _, arm| arm == Arm::Variant);
        // Gap on the variant side of two pairs: those pairs leave the rates and the test.
        for o in outcomes
            .iter_mut()
            .filter(|o| o.arm == Arm::Variant)
            .take(2)
        {
            o.gapped = true;
        }
        outcomes.push(outcome("lonely", "c", Arm::Baseline, 0, true));
        let c = &summarize(&outcomes).unwrap().categories[0];
        assert_eq!((c.gapped_pairs, c.unpaired_runs), (2, 1));
        assert_eq!((c.pairs, c.samples), (8, 8));
        assert_eq!(c.variant.rate, Some(1.0));
        assert_eq!(c.p_value, exact_binomial_two_sided(8, 0));
    }

    #[test]
    fn a_fully_gapped_category_has_no_data() {
        let mut outcomes = runs("gappy", 3, 1, |_, _, _| true);
        outcomes.iter_mut().for_each(|o| o.gapped = true);
        outcomes.extend(runs("fine", 3, 1, |_, _, _| true));
        let summary = summarize(&outcomes).unwrap();
        let gappy = summary
            .categories
            .iter()
            .find(|c| c.category == "gappy")
            .unwrap();
        assert_eq!(gappy.verdict, Verdict::NoData);
        assert_eq!((gappy.rate_pair(), gappy.gapped_pairs), ((None, None), 3));
        assert_eq!(summary.total.gapped_pairs, 3);
        assert_eq!(summary.total.pairs, 3);
    }

    impl CategorySummary {
        fn rate_pair(&self) -> (Option<f64>, Option<f64>) {
            (self.baseline.rate, self.variant.rate)
        }
    }

    #[test]
    fn errored_runs_count_as_failures() {
        let mut outcomes = runs("c", 2, 1, |_, _, _| true);
        outcomes[1].errored = true; // sample 0, variant
        let c = &summarize(&outcomes).unwrap().categories[0];
        assert_eq!(c.variant.rate, Some(0.5));
        assert_eq!(c.variant.errored, 1);
    }

    #[test]
    fn law_failures_and_flaky_samples_are_listed() {
        let mut outcomes = runs("c", 2, 2, |s, r, arm| {
            !(arm == Arm::Variant && s == 1 && r == 0)
        });
        outcomes[0].failed_laws = vec!["law-b".into()];
        outcomes[0].passed = false;
        let summary = summarize(&outcomes).unwrap();
        assert_eq!(
            summary.law_failures,
            vec![
                LawFailures {
                    law: "law-a".into(),
                    baseline: 0,
                    variant: 1
                },
                LawFailures {
                    law: "law-b".into(),
                    baseline: 1,
                    variant: 0
                },
            ]
        );
        let flaky: Vec<(&str, Arm)> = summary
            .flaky_samples
            .iter()
            .map(|f| (f.sample_id.as_str(), f.arm))
            .collect();
        assert_eq!(flaky, vec![("c-0", Arm::Baseline), ("c-1", Arm::Variant)]);
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
            outcome("s", "d", Arm::Variant, 0, true),
        ];
        assert!(matches!(
            summarize(&clash),
            Err(StatsError::CategoryClash { .. })
        ));
    }

    #[test]
    fn outcomes_deserialize_with_defaults() {
        let o: Outcome = serde_json::from_str(
            r#"{"sample_id":"s","category":"c","arm":"variant","repeat":2,"passed":true}"#,
        )
        .unwrap();
        assert_eq!(
            (o.arm, o.repeat, o.gapped, o.errored),
            (Arm::Variant, 2, false, false)
        );
    }
}
