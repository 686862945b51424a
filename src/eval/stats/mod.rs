//! Paired comparisons of two arms of a run, per category, per law and in total.
//!
//! A run has up to three arms: `control` (the skill under test with an empty body), `baseline`
//! and `variant`. [`summarize`] makes two comparisons of them: the **skill effect** (baseline
//! against control: does the skill's body change what the model does at all?) and the
//! **wording** (variant against baseline). [`compare`] makes one comparison of any two arms.
//!
//! # Method
//!
//! **Pairs.** Every arm runs each (sample, repeat) with the same seed, so a comparison pairs its
//! two arms' runs of one (sample, repeat). A run that hit a fixture gap is scored as judged, like
//! any other: gaps are the model's calls that no recording answers (an invented place, markup
//! passed as the location, a weather call on a question that is not about weather), and dropping
//! their pairs moved comparisons toward the arm that gapped more. Gaps are counted per arm
//! (`ArmSummary::gapped`) and per row (`gapped_pairs`). A run whose partner is missing is dropped
//! and counted (`unpaired_runs`). An errored run counts as a failure.
//!
//! **Two outcomes.** A run passes when every law that applies to it holds; it also has a graded
//! outcome, the share of its laws that held. Every category and the total are compared on both
//! (the graded comparison is `Row::held`): where a sample almost never passes every law, a
//! wording that breaks one law in every run moves no pass rate but every graded one.
//!
//! **Per-sample differences.** For each sample, d = treatment's pass fraction minus the
//! reference's, over the sample's scored pairs. Samples are the unit of evidence: repeats of
//! one sample share its prompt (under greedy decoding they are identical), so they refine d
//! but are not independent samples.
//!
//! **Δ** is the mean of d over the row's samples. An arm's rate is the mean of its per-sample
//! pass fractions, so Δ is exactly the difference of the two rates.
//!
//! **Interval:** a 95% percentile bootstrap interval of Δ from [`BOOTSTRAP_RESAMPLES`]
//! resamples of samples with replacement (the pairing is kept: a sample's d moves as one).
//! The total and the per-law rows resample within categories (stratified), so that each
//! category keeps its size. Each stratum's resampled mean is spread by √(n/(n − 1)) around its
//! mean (Rao and Wu's rescaling: resampling n from n understates the variance by (n − 1)/n),
//! and categories of a single sample are pooled into one stratum; the interval is clipped to
//! ±1, the widest a difference of pass rates can be. The seed comes from the comparison's and the row's names: the same
//! outcomes always give the same interval.
//!
//! **p:** the two-sided sign-flip permutation test of "d is symmetric around 0": the share of
//! the 2^n sign patterns of the d's whose sum is at least as far from 0 as the observed sum.
//! It is computed exactly (by convolution over the d's as integers over a common denominator),
//! with a seeded Monte-Carlo fallback only for distributions too large to tabulate.
//!
//! **One family per comparison.** Every row a comparison shows (each category on both outcomes,
//! the total on both, every law) is adjusted together by the step-down min-P test of [`family`]
//! over joint sign flips of whole samples, so the chance of any false verdict anywhere in the
//! comparison stays under α, and rows that move together (a law and its category) pay once.
//! With several variants, each comparison's family has α over their number. The skill effect is
//! a family of its own.
//!
//! **Verdict:** `better` when p_adjusted < [`ALPHA`] **and** the 95% interval lies wholly
//! above 0; `worse` when p_adjusted < α and the interval lies wholly below 0. The interval is
//! the unadjusted 95% one. A category or total takes the verdict of either outcome (`mixed`
//! when they disagree); a total whose categories moved in opposite directions is `mixed`.
//! Otherwise `too_few_samples` when even the most extreme outcome could not be called last in
//! the step-down (smallest possible p = 2/2^n ≥ the family's α), else `no_change`; `no_data`
//! when no pair could be scored.
//!
//! **Level and minimum detectable effect (MDE).** A row's level is the raw p it needs when it
//! is the only real effect in its family: the α-quantile of the smallest p over the family's
//! rows under the flips. The MDE is the Δ this run would detect with [`POWER`] probability at
//! that level, per direction (`mde_rise`, `mde_decline`), `None` in a direction the reference's
//! rates leave too little room for.
//!
//! *Rows of fewer than [`SIMULATED_BELOW`] samples* simulate their own test
//! ([`method::PowerModel`]): each sample gets the probability (passes + ½)/(runs + 1) over both
//! arms' runs; a change δ moves every probability by the common c, clipped at 0 and 1, that
//! moves their mean by δ; both arms' repeats are drawn [`method::POWER_DRAWS`] times (seeded from
//! the comparison's and row's names, the same draws for every δ), and the power is the share of
//! draws whose sign-flip p is below the level with the sign of δ. The MDE is the smallest δ with
//! power ≥ [`POWER`], searched to 0.002, upwards and downwards, the larger of the two; a
//! direction that cannot reach the power within the room its rates leave counts as that room,
//! and the MDE is `None` when no δ suffices. The one-sample t-test formula below promises too
//! much here: samples with d = 0 do not count in the sign-flip test, and with the nine or so
//! informative samples of a category the smallest p barely clears α/10. On simulated runs shaped
//! like the weather corpus (tests/stats_simulation.rs) the formula promised 36% power at +25 pp
//! where runs found 26%; the simulation promises what runs find. The bootstrap interval is left
//! out of the simulation: a p below the level nearly always comes with an interval that
//! excludes 0, and the tests count it in the power they find.
//!
//! *Larger rows* (usually the total) use (t_{df, 1−level/2} + t_{df, power}) × √(v / n) + s/2,
//! with v the variance of d (pooled within categories for stratified rows), df = n − number of
//! categories and s the step of Δ under the test (half of it a continuity correction). When v
//! is below what one sample moving by one repeat would give (1 / (n·r̄²), r̄ = mean scored
//! repeats per sample), the data cannot tell its spread, and v is floored at the variance of d
//! when both arms' runs were independent draws at the pooled pass rate, 2·p̃(1−p̃)/r̄, with
//! p̃ = (passes + r̄) / (runs + 2·r̄): one sample passing and one failing are added so that a
//! row where every run passed (or failed) still has a floor (`mde_floored`; never set on
//! simulated rows). The floor is conservative (runs of a sample are at least as alike as
//! independent draws), which is the safe side for a claim of "no change". The formula is cheap
//! and its critical values do not depend on the many sign patterns a large row can show; it
//! still gives MDEs about a tenth smaller than the simulation at 60–100 samples.
//!
//! **Repeats for a target effect.** The variance of d splits into the spread of samples' true
//! differences (τ²) and the repeat-to-repeat noise of one run's difference (σ²_w, pooled over
//! samples from the per-repeat differences): v = τ² + σ²_w / r. The MDE with r repeats is
//! k·√((τ² + σ²_w / r) / n), k the multiplier above; the repeats needed for an MDE of
//! [`TARGET_EFFECT`] are the smallest r with σ²_w / r ≤ n·(target / k)² − τ²: none suffice
//! when τ² alone exceeds it (more samples are needed), and σ²_w is unknown with one repeat.
//! This stays with the formula for every row (a simulation per candidate r would be slow), so
//! for small rows it is a lower bound.
//!
//! **Noise band.** Each arm's pass rate per repeat; the band is the min–max over repeats.

pub mod family;
pub mod method;
pub mod reach;
pub mod sequential;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub use method::Interval;

/// Family-wise significance level.
pub const ALPHA: f64 = 0.05;
/// Coverage of the bootstrap interval.
pub const CONFIDENCE: f64 = 0.95;
/// Power at which the minimum detectable effect is given.
pub const POWER: f64 = 0.80;
/// Bootstrap resamples per interval: enough that an interval's ends move by less than 0.2 pp
/// between seeds (2,000 moved them by about 1 pp).
pub const BOOTSTRAP_RESAMPLES: usize = 50_000;
/// The effect the report says how many repeats would detect.
pub const TARGET_EFFECT: f64 = 0.10;
/// Rows with fewer samples take their MDE from a simulation of their own test
/// ([`method::PowerModel`]); larger rows from the t-test formula, whose gap to the simulation
/// has shrunk to about a tenth there (from a quarter at 15 samples) and which does not slow
/// with the number of sign patterns a large row can show.
pub const SIMULATED_BELOW: usize = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Arm {
    /// The skill under test with its body removed: what the skill's front matter alone does.
    Control,
    Baseline,
    /// The first (or only) variant.
    Variant,
    /// A further variant of a run that compares several: `More(0)` is the second variant
    /// (`variant2`), up to [`MAX_VARIANTS`].
    More(u8),
}

/// The most variants one run compares with its baseline.
pub const MAX_VARIANTS: usize = 9;

const MORE_NAMES: [&str; MAX_VARIANTS - 1] = [
    "variant2", "variant3", "variant4", "variant5", "variant6", "variant7", "variant8", "variant9",
];

impl Arm {
    pub fn name(self) -> &'static str {
        match self {
            Arm::Control => "control",
            Arm::Baseline => "baseline",
            Arm::Variant => "variant",
            Arm::More(i) => MORE_NAMES[usize::from(i)],
        }
    }

    /// The arm of the run's `index`-th variant (from 0).
    pub fn variant(index: usize) -> Arm {
        assert!(index < MAX_VARIANTS, "at most {MAX_VARIANTS} variants");
        match index {
            0 => Arm::Variant,
            i => Arm::More((i - 1) as u8),
        }
    }

    /// Which variant this arm is (from 0), if it is one.
    pub fn variant_index(self) -> Option<usize> {
        match self {
            Arm::Variant => Some(0),
            Arm::More(i) => Some(usize::from(i) + 1),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<Arm> {
        match name {
            "control" => Some(Arm::Control),
            "baseline" => Some(Arm::Baseline),
            "variant" => Some(Arm::Variant),
            other => MORE_NAMES
                .iter()
                .position(|n| *n == other)
                .map(|i| Arm::More(i as u8)),
        }
    }
}

impl Serialize for Arm {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Arm {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Arm::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown arm {name:?}; known: control, baseline, variant, variant2 … variant{MAX_VARIANTS}"
            ))
        })
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
    /// Laws that applied to the sample (empty in journals written before they were recorded).
    #[serde(default)]
    pub applied_laws: Vec<String>,
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

    fn law_held(&self, law: &str) -> bool {
        !self.errored && !self.failed_laws.iter().any(|l| l == law)
    }

    /// The share of the laws that applied to this run which held: a graded outcome that still
    /// moves where a sample almost never passes every law. An errored run held none; a journal
    /// that did not record its laws gives the pass as 0 or 1.
    fn laws_held_share(&self) -> f64 {
        if self.errored {
            return 0.0;
        }
        if self.applied_laws.is_empty() {
            return f64::from(u8::from(self.passed));
        }
        let held = self
            .applied_laws
            .iter()
            .filter(|law| !self.failed_laws.contains(law))
            .count();
        held as f64 / self.applied_laws.len() as f64
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    /// No verdict, and the run could have seen a change of the row's MDE.
    NoChange,
    /// No verdict, and no outcome of this many samples could have reached the row's level.
    TooFewSamples,
    NoData,
    /// Significant changes in opposite directions within the row: categories of a total, or a
    /// category's pass rate and its share of laws held.
    Mixed,
}

/// Lowest and highest per-repeat pass rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Band {
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    pub arm: Arm,
    /// Mean over samples of each sample's pass fraction (passes over scored runs when every
    /// sample has the same number of scored repeats).
    pub rate: Option<f64>,
    pub band: Option<Band>,
    pub passes: usize,
    pub runs: usize,
    pub errored: usize,
    /// Runs that met a call no fixture answers; they are scored as judged (the judge saw no
    /// answer to report), and counted here so that an arm that gaps more is visible.
    #[serde(default)]
    pub gapped: usize,
    /// Samples that passed in every scored repeat.
    pub always_pass: usize,
    pub always_fail: usize,
    /// Samples that both passed and failed across repeats.
    pub flaky: usize,
}

/// How many repeats would bring the row's MDE down to [`TARGET_EFFECT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepeatsNeeded {
    Repeats(u64),
    /// The spread between samples alone keeps the MDE above the target: add samples.
    MoreSamples,
    /// Repeat-to-repeat noise cannot be measured from one repeat, or there are too few samples.
    Unknown,
}

/// One row of a comparison: a category, a law, or the total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Category name, law name, or `total`.
    pub name: String,
    /// Samples with at least one scored pair.
    pub samples: usize,
    /// Scored (sample, repeat) pairs.
    pub pairs: usize,
    pub reference: ArmSummary,
    pub treatment: ArmSummary,
    /// Mean per-sample difference, treatment minus reference.
    pub delta: Option<f64>,
    /// 95% bootstrap interval of Δ.
    pub interval: Option<Interval>,
    pub p_value: f64,
    /// `p_value` is the exact sign-flip p (else a Monte-Carlo estimate).
    #[serde(default = "exact_by_default")]
    pub p_exact: bool,
    /// Adjusted for every row the reader sees of this comparison, and for the other variants of
    /// the run ([`family`]): a verdict needs it below [`ALPHA`]. Always a Monte-Carlo figure.
    pub p_adjusted: f64,
    /// The raw p below which the row is called when it is the only change of its family.
    pub level: f64,
    /// The smallest p the test could give with this many samples.
    pub smallest_p: f64,
    /// Minimum detectable effect at [`POWER`] power and `level`, as a fraction.
    pub mde: Option<f64>,
    /// The variance behind the MDE is the floor, not the observed one.
    pub mde_floored: bool,
    /// The smallest rise and decline found with [`POWER`] power, each `None` when the
    /// reference's rates leave too little room for one that large to be found.
    #[serde(default)]
    pub mde_rise: Option<f64>,
    #[serde(default)]
    pub mde_decline: Option<f64>,
    /// The same comparison on a graded outcome, the share of a run's laws that held (categories
    /// and the total only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldShare>,
    /// Variance of the per-sample differences used for the MDE.
    pub variance: Option<f64>,
    /// Samples less categories: the degrees of freedom of `variance`.
    pub degrees_of_freedom: usize,
    /// Distance between neighbouring values the sign-flip test's Δ can take: flipping one
    /// difference of a single repeat moves Δ by 2 / (n·r), r the common denominator of the
    /// samples' repeat counts.
    pub step: f64,
    /// Spread of the samples' true differences (τ²) and repeat-to-repeat noise of one
    /// difference (σ²_w), when they could be estimated.
    pub between_samples: Option<f64>,
    pub between_repeats: Option<f64>,
    pub repeats_for_target: RepeatsNeeded,
    pub verdict: Verdict,
    /// In a sequential run, the chance the row is called by the last planned repeat if its Δ so
    /// far is the truth (1 once called); absent in a fixed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditional_power: Option<f64>,
    /// Scored pairs in which either side hit a fixture gap (scored as judged, not dropped).
    pub gapped_pairs: usize,
    /// Runs excluded because their partner run is missing.
    pub unpaired_runs: usize,
}

fn exact_by_default() -> bool {
    true
}

/// A category's (or the total's) comparison on the share of a run's laws that held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldShare {
    /// Mean over samples of each arm's mean share of laws held.
    pub reference: f64,
    pub treatment: f64,
    pub delta: f64,
    pub interval: Option<Interval>,
    /// Monte-Carlo sign-flip p over the family's joint flips.
    pub p_value: f64,
    pub p_adjusted: f64,
    /// `better`, `worse` or `no_change`.
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditional_power: Option<f64>,
}

impl Row {
    /// The verdict as a reader should see it. "no change ≥ X pp" carries the MDE and is said
    /// only when Δ is smaller than X and the reference leaves room for a change of X both ways;
    /// otherwise the label says per direction what the run could see. A Δ as large as the MDE
    /// that the test still could not confirm is "inconclusive". A verdict carried by the share
    /// of laws held rather than the pass rate says so.
    pub fn verdict_label(&self) -> String {
        let held_only = self
            .held
            .as_ref()
            .is_some_and(|h| h.verdict == self.verdict)
            && self.pass_verdict().is_none();
        match self.verdict {
            Verdict::Better if held_only => "better (laws held)".into(),
            Verdict::Worse if held_only => "worse (laws held)".into(),
            Verdict::Better => "better".into(),
            Verdict::Worse => "worse".into(),
            Verdict::Mixed => "mixed".into(),
            Verdict::NoChange => self.no_change_label(),
            Verdict::TooFewSamples => "too few samples".into(),
            Verdict::NoData => "no data".into(),
        }
    }

    /// `better` or `worse` when the pass rate's own test found a change.
    pub fn pass_verdict(&self) -> Option<Verdict> {
        let significant = self.p_adjusted < ALPHA;
        match self.interval {
            Some(i) if significant && i.low > 0.0 => Some(Verdict::Better),
            Some(i) if significant && i.high < 0.0 => Some(Verdict::Worse),
            _ => None,
        }
    }

    fn no_change_label(&self) -> String {
        let Some(mde) = self.mde else {
            return "no change; MDE —".into();
        };
        if self.delta.is_some_and(|d| d.abs() >= mde) {
            return "inconclusive".into();
        }
        let pp = |x: f64| (x * 100.0).ceil();
        match (self.mde_rise, self.mde_decline) {
            (Some(rise), None) => format!("no rise ≥ {:.0}, ↓ unseen", pp(rise)),
            (None, Some(decline)) => format!("no fall ≥ {:.0}, ↑ unseen", pp(decline)),
            _ => format!("no change ≥ {:.0} pp", pp(mde)),
        }
    }

    /// The directions in which no change this run could find with the stated power fits in
    /// the room the reference's rate leaves: `(rise, decline)`.
    pub fn unseen(&self) -> (bool, bool) {
        if self.verdict != Verdict::NoChange || self.samples == 0 {
            return (false, false);
        }
        (self.mde_rise.is_none(), self.mde_decline.is_none())
    }

    pub fn changed(&self) -> bool {
        matches!(
            self.verdict,
            Verdict::Better | Verdict::Worse | Verdict::Mixed
        )
    }

    /// Something in this row got worse beyond noise: its verdict, or a part of a mixed row.
    pub fn declined(&self) -> bool {
        matches!(self.verdict, Verdict::Worse | Verdict::Mixed)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LawFailures {
    pub law: String,
    /// Scored runs of each arm in which the law failed.
    pub reference: usize,
    pub treatment: usize,
}

/// One comparison of two arms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// `skill_effect` or `wording` (`wording:variant2`… for further variants); names the seeds
    /// of its intervals.
    pub name: String,
    /// The variant's name as the reader knows it, in a run that compares several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub reference: Arm,
    pub treatment: Arm,
    /// Sorted by category name.
    pub categories: Vec<Row>,
    pub total: Row,
    /// One row per law that applied to some scored pair, sorted by name. Empty for journals
    /// that did not record which laws applied.
    pub laws: Vec<Row>,
    /// Most failed first.
    pub law_failures: Vec<LawFailures>,
    /// In a sequential run, the rows neither called nor settled at this look: those that keep
    /// the run going ([`sequential`]). Empty in a fixed run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_rows: Vec<String>,
}

impl Comparison {
    /// Whether some category, the total or a law changed beyond noise.
    pub fn any_change(&self) -> bool {
        self.rows().any(Row::changed)
    }

    /// Whether some row declined beyond noise.
    pub fn any_decline(&self) -> bool {
        self.rows().any(Row::declined)
    }

    /// Every row: categories, the total, laws.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.categories
            .iter()
            .chain([&self.total])
            .chain(&self.laws)
    }

    /// Units of each arm that met a fixture gap, over the whole comparison.
    pub fn gaps(&self) -> (usize, usize) {
        (self.total.reference.gapped, self.total.treatment.gapped)
    }
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
    pub confidence: f64,
    pub power: f64,
    pub bootstrap_resamples: usize,
    /// Joint sign flips behind every adjusted p ([`family`]).
    #[serde(default)]
    pub joint_flips: usize,
    pub target_effect: f64,
    pub repeats: usize,
    /// Baseline against control; absent when the control arm did not run.
    pub skill_effect: Option<Comparison>,
    /// Variant against baseline (in an A/A run, the baseline against a second draw of itself).
    pub wording: Comparison,
    /// The second and further variants against the same baseline, when a run compares several;
    /// then each variant's family has α over their number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_wordings: Vec<Comparison>,
    pub flaky_samples: Vec<FlakySample>,
    /// The looks of a sequential run, this one last; absent in a fixed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<sequential::Looks>,
}

impl Summary {
    /// Every wording comparison, the first variant's first.
    pub fn wordings(&self) -> impl Iterator<Item = &Comparison> {
        [&self.wording].into_iter().chain(&self.more_wordings)
    }

    /// Every comparison of the run: the skill effect (when the control ran), then each wording.
    pub fn comparisons(&self) -> impl Iterator<Item = &Comparison> {
        self.skill_effect.iter().chain(self.wordings())
    }

    /// Names the part of the skill the control arm removed, when it is not the body.
    pub fn label_control(&mut self, removed: &str) {
        if let Some(skill) = self.skill_effect.as_mut() {
            skill.label = (removed != "body").then(|| removed.to_string());
        }
    }

    /// Names each wording comparison after its variant (a file name, say), in variant order;
    /// a run with one variant keeps its plain "wording".
    pub fn label_variants(&mut self, labels: &[String]) {
        if self.more_wordings.is_empty() {
            return;
        }
        let wordings = [&mut self.wording]
            .into_iter()
            .chain(&mut self.more_wordings);
        for (comparison, label) in wordings.zip(labels) {
            comparison.label = Some(label.clone());
        }
    }
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

/// How much work the statistics spend: what every report uses, or less for simulations that
/// read only the verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effort {
    pub bootstrap_resamples: usize,
    pub joint_flips: usize,
    /// Compute each row's MDE and the repeats for the target (the slow part).
    pub power: bool,
}

impl Effort {
    /// What every report of a run uses.
    pub const REPORT: Effort = Effort {
        bootstrap_resamples: BOOTSTRAP_RESAMPLES,
        joint_flips: family::JOINT_FLIPS,
        power: true,
    };
}

/// Both comparisons of a run: the skill effect when control outcomes exist, and the wording.
pub fn summarize(outcomes: &[Outcome]) -> Result<Summary, StatsError> {
    summarize_with(outcomes, Effort::REPORT)
}

/// [`summarize`] at another effort: fewer resamples, no power analysis.
pub fn summarize_with(outcomes: &[Outcome], effort: Effort) -> Result<Summary, StatsError> {
    summarize_looked(outcomes, effort, None)
}

/// [`summarize_with`], for the looks of a sequential run when `looks` is given (the outcomes
/// are those of its last look).
pub fn summarize_looked(
    outcomes: &[Outcome],
    effort: Effort,
    looks: Option<&sequential::Looks>,
) -> Result<Summary, StatsError> {
    let skill_effect = outcomes
        .iter()
        .any(|o| o.arm == Arm::Control)
        .then(|| {
            compare_many_looked(
                outcomes,
                &["skill_effect".to_string()],
                Arm::Control,
                &[Arm::Baseline],
                effort,
                looks,
            )
            .map(|mut one| one.remove(0).0)
        })
        .transpose()?;
    let variants: BTreeSet<Arm> = outcomes
        .iter()
        .map(|o| o.arm)
        .filter(|a| a.variant_index().is_some())
        .chain([Arm::Variant])
        .collect();
    let treatments: Vec<Arm> = variants.into_iter().collect();
    let names: Vec<String> = treatments.iter().map(|&a| wording_name(a)).collect();
    let mut wordings =
        compare_many_looked(outcomes, &names, Arm::Baseline, &treatments, effort, looks)?
            .into_iter();
    let wording = wordings
        .next()
        .expect("the first variant is always compared")
        .0;
    let more_wordings = wordings.map(|(comparison, _)| comparison).collect();
    let repeats: BTreeSet<u32> = outcomes.iter().map(|o| o.repeat).collect();
    Ok(Summary {
        alpha: ALPHA,
        confidence: CONFIDENCE,
        power: POWER,
        bootstrap_resamples: effort.bootstrap_resamples,
        joint_flips: effort.joint_flips,
        target_effect: TARGET_EFFECT,
        repeats: repeats.len(),
        skill_effect,
        wording,
        more_wordings,
        flaky_samples: flaky_samples(outcomes)?,
        sequential: looks.cloned(),
    })
}

/// Whether some variant is worse beyond noise in any row the report shows for it: a category
/// (its pass rate or its share of laws held), the total, or a law. The condition `--fail-on
/// worse` stops on; every row is in the one error budget of [`family`].
pub fn any_worse(summary: &Summary) -> bool {
    summary.wordings().any(Comparison::any_decline)
}

/// The name of the wording comparison of a variant arm: `wording` for the first, so that a
/// run with one variant reads (and draws its bootstrap seeds) as it always has.
pub fn wording_name(arm: Arm) -> String {
    match arm {
        Arm::Variant => "wording".to_string(),
        other => format!("wording:{}", other.name()),
    }
}

/// One scored pair: the two arms' runs of a (sample, repeat).
struct ScoredPair<'a> {
    repeat: u32,
    reference: &'a Outcome,
    treatment: &'a Outcome,
}

/// A sample's scored pairs.
struct SampleRuns<'a> {
    category: &'a str,
    pairs: Vec<ScoredPair<'a>>,
}

/// What a row is computed from: per sample, per repeat, whether each arm passed, and whether
/// it errored.
struct RowInput<'a> {
    /// (category, runs) per sample.
    samples: Vec<(&'a str, Vec<Run<'a>>)>,
    gapped_pairs: usize,
    unpaired_runs: usize,
}

/// One scored pair as (repeat, reference run, treatment run).
type Run<'a> = (u32, &'a Outcome, &'a Outcome);

type PairKey<'a> = (&'a str, &'a str, u32);

/// The outcomes of every arm, by (category, sample, repeat), refusing duplicates and samples
/// that change category.
fn index(
    outcomes: &[Outcome],
) -> Result<BTreeMap<PairKey<'_>, BTreeMap<Arm, &Outcome>>, StatsError> {
    let mut category_of: BTreeMap<&str, &str> = BTreeMap::new();
    let mut runs: BTreeMap<PairKey, BTreeMap<Arm, &Outcome>> = BTreeMap::new();
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
        let arms = runs
            .entry((category, &outcome.sample_id, outcome.repeat))
            .or_default();
        if arms.insert(outcome.arm, outcome).is_some() {
            return Err(StatsError::Duplicate {
                sample_id: outcome.sample_id.clone(),
                arm: outcome.arm.name(),
                repeat: outcome.repeat,
            });
        }
    }
    Ok(runs)
}

/// Compares `treatment` against `reference` over the outcomes of a run; `name` names the
/// comparison (and seeds its bootstrap).
pub fn compare(
    outcomes: &[Outcome],
    name: &str,
    reference: Arm,
    treatment: Arm,
) -> Result<Comparison, StatsError> {
    compare_with_power(outcomes, name, reference, treatment).map(|(comparison, _)| comparison)
}

/// What a row's MDE rests on: asked for the power at any true change, it gives what the row
/// promises a reader.
#[derive(Debug, Clone)]
pub enum RowPower {
    /// A simulation of the row's own test (rows of fewer than [`SIMULATED_BELOW`] samples).
    Simulated(method::PowerModel),
    /// The one-sample t-test's formula (larger rows).
    Formula {
        samples: usize,
        variance: f64,
        degrees_of_freedom: usize,
        step: f64,
        level: f64,
    },
    /// No samples, or no variance to go on.
    Unknown,
}

impl RowPower {
    /// The chance that the row's verdict finds a true mean change `effect` (positive: the
    /// treatment passes more); `None` when nothing is known or the change cannot happen.
    pub fn power(&self, effect: f64) -> Option<f64> {
        match self {
            RowPower::Simulated(model) => model.power(effect),
            &RowPower::Formula {
                samples,
                variance,
                degrees_of_freedom,
                step,
                level,
            } => Some(method::promised_power(
                samples,
                variance,
                degrees_of_freedom,
                step,
                level,
                effect,
            )),
            RowPower::Unknown => None,
        }
    }
}

/// The [`RowPower`] of every row of a comparison, in the comparison's order.
#[derive(Debug, Clone)]
pub struct Powers {
    pub categories: Vec<RowPower>,
    pub total: RowPower,
    pub laws: Vec<RowPower>,
}

/// [`compare`], with what each row's MDE rests on.
pub fn compare_with_power(
    outcomes: &[Outcome],
    name: &str,
    reference: Arm,
    treatment: Arm,
) -> Result<(Comparison, Powers), StatsError> {
    let mut one = compare_many(outcomes, &[name.to_string()], reference, &[treatment])?;
    Ok(one.remove(0))
}

/// Compares each of `treatments` against `reference` (the comparison named by the same place
/// in `names`). Every row the reader sees of one comparison (its categories on the pass rate and
/// on the share of laws held, the total on both, every law) is one family under the joint
/// step-down test of [`family`]; with several treatments each family gets α over their number
/// (Bonferroni), so the run as a whole calls something by chance in at most α of runs, however
/// many variants and rows it shows.
pub fn compare_many(
    outcomes: &[Outcome],
    names: &[String],
    reference: Arm,
    treatments: &[Arm],
) -> Result<Vec<(Comparison, Powers)>, StatsError> {
    compare_many_with(outcomes, names, reference, treatments, Effort::REPORT)
}

/// [`compare_many`] at another effort.
pub fn compare_many_with(
    outcomes: &[Outcome],
    names: &[String],
    reference: Arm,
    treatments: &[Arm],
    effort: Effort,
) -> Result<Vec<(Comparison, Powers)>, StatsError> {
    compare_many_looked(outcomes, names, reference, treatments, effort, None)
}

/// [`compare_many_with`], under the looks of a sequential run when `looks` is given: the
/// outcomes are those of its last look, and each earlier look sees the repeats it had.
pub fn compare_many_looked(
    outcomes: &[Outcome],
    names: &[String],
    reference: Arm,
    treatments: &[Arm],
    effort: Effort,
    looks: Option<&sequential::Looks>,
) -> Result<Vec<(Comparison, Powers)>, StatsError> {
    assert_eq!(names.len(), treatments.len(), "one name per treatment");
    let runs = index(outcomes)?;
    // Earlier looks need only each row's per-sample differences.
    let quick = Effort {
        bootstrap_resamples: 1,
        power: false,
        ..effort
    };
    let earlier: Vec<(Vec<Outcome>, u32)> = looks
        .map(|l| {
            let last = l.at.last().copied().unwrap_or(0);
            l.at.iter()
                .filter(|&&r| r < last)
                .map(|&r| {
                    let seen = outcomes.iter().filter(|o| o.repeat < r).cloned().collect();
                    (seen, r)
                })
                .collect()
        })
        .unwrap_or_default();
    let earlier_runs = earlier
        .iter()
        .map(|(seen, _)| index(seen))
        .collect::<Result<Vec<_>, _>>()?;
    let families = treatments.len().max(1);
    let mut out = Vec::new();
    for (name, &treatment) in names.iter().zip(treatments) {
        let raw = raw_comparison(&runs, name, reference, treatment, effort);
        let before: Vec<RawComparison> = earlier_runs
            .iter()
            .map(|runs| raw_comparison(runs, name, reference, treatment, quick))
            .collect();
        let design = looks.map(|l| (l, before));
        out.push(finish_comparison(raw, design, reference, families, effort));
    }
    Ok(out)
}

/// One comparison's rows through its family: the joint test, then each row's level, MDE and
/// verdict, then the total's word when its categories moved apart.
fn finish_comparison(
    raw: RawComparison,
    design: Option<(&sequential::Looks, Vec<RawComparison>)>,
    reference: Arm,
    families: usize,
    effort: Effort,
) -> (Comparison, Powers) {
    let RawComparison {
        name,
        treatment,
        categories,
        total,
        laws,
        held_categories,
        held_total,
        law_failures,
    } = raw;
    // The family's rows in a fixed order: categories, total, laws, then the held shares.
    let (c, l, h) = (categories.len(), laws.len(), held_categories.len());
    let has_held_total = held_total.is_some();
    let tested: Vec<RawRow> = categories
        .into_iter()
        .chain([total])
        .chain(laws)
        .chain(held_categories)
        .chain(held_total)
        .collect();
    let keys: Vec<(usize, &str)> = tested.iter().map(RawRow::key).collect();
    let samples: BTreeSet<&str> = tested
        .iter()
        .flat_map(|r| r.columns.iter().map(|(id, _)| id.as_str()))
        .collect();
    let column: BTreeMap<&str, usize> = samples.iter().enumerate().map(|(i, &s)| (s, i)).collect();
    // One row per tested row, in its order, one column per sample of the last look.
    let matrix_of = |rows: &[&RawRow]| -> Vec<Vec<f64>> {
        let by_key: BTreeMap<(usize, &str), &RawRow> = rows.iter().map(|r| (r.key(), *r)).collect();
        keys.iter()
            .map(|key| {
                let mut row = vec![0.0; samples.len()];
                for (id, d) in by_key.get(key).map_or(&[][..], |r| &r.columns[..]) {
                    if let Some(&at) = column.get(id.as_str()) {
                        row[at] = *d;
                    }
                }
                row
            })
            .collect()
    };
    let matrix = matrix_of(&tested.iter().collect::<Vec<_>>());
    let family_level = ALPHA / families as f64;
    let seed = method::seed_for(&[&name, "family"]);
    let test = family::step_down_min_p(&matrix, effort.joint_flips, family_level, seed);
    // A sequential run calls a row when it crosses its look's boundary ([`sequential`]).
    let called: Vec<bool> = match &design {
        None => test
            .adjusted
            .iter()
            .map(|&a| a * (families as f64) < ALPHA)
            .collect(),
        Some((looks, before)) => {
            let mut matrices: Vec<Vec<Vec<f64>>> = before
                .iter()
                .map(|b| matrix_of(&b.tested().collect::<Vec<_>>()))
                .collect();
            matrices.push(matrix.clone());
            let spent = looks.spent(family_level);
            sequential::step_down(&matrices, &spent, effort.joint_flips, seed).0
        }
    };
    let (critical, critical_still) = (test.critical, test.critical_for_a_still_row);
    let mut finished = tested
        .into_iter()
        .zip(test.adjusted.iter().zip(&test.raw).zip(&called))
        .map(|(raw, ((&adjusted, &monte_carlo), &called))| {
            let still = raw.columns.iter().all(|(_, d)| *d == 0.0);
            let level = if still { critical_still } else { critical };
            let p_adjusted = (adjusted * families as f64).min(1.0);
            let mut finished = finish_row(
                raw,
                level,
                family_level,
                p_adjusted,
                called,
                monte_carlo,
                effort.power,
            );
            if let Some((looks, _)) = &design {
                finished.0.conditional_power = Some(if called {
                    1.0
                } else {
                    row_conditional_power(&finished.0, looks, level)
                });
            }
            finished
        });
    let category_results: Vec<(Row, RowPower)> = finished.by_ref().take(c).collect();
    let (mut total, total_power) = finished.next().expect("the total is tested");
    let law_results: Vec<(Row, RowPower)> = finished.by_ref().take(l).collect();
    let held_results: Vec<Row> = finished.by_ref().take(h).map(|(row, _)| row).collect();
    let held_total = has_held_total.then(|| finished.next().expect("the held total").0);

    let (mut category_rows, category_powers): (Vec<Row>, Vec<RowPower>) =
        category_results.into_iter().unzip();
    for (row, held) in category_rows.iter_mut().zip(held_results) {
        attach_held(row, &held);
    }
    if let Some(held_total) = &held_total {
        attach_held(&mut total, held_total);
    }
    // A total over categories that moved apart says so rather than averaging them away.
    let directions: BTreeSet<Verdict> = category_rows
        .iter()
        .flat_map(|r| [r.pass_verdict(), r.held.as_ref().map(|h| h.verdict)])
        .flatten()
        .filter(|v| matches!(v, Verdict::Better | Verdict::Worse))
        .collect();
    if directions.len() == 2 {
        total.verdict = Verdict::Mixed;
    }
    let (law_rows, law_powers): (Vec<Row>, Vec<RowPower>) = law_results.into_iter().unzip();
    let open_rows = match design {
        Some(_) => open_rows(&category_rows, &total, &law_rows),
        None => Vec::new(),
    };
    let comparison = Comparison {
        name,
        label: None,
        reference,
        treatment,
        categories: category_rows,
        total,
        laws: law_rows,
        law_failures,
        open_rows,
    };
    let powers = Powers {
        categories: category_powers,
        total: total_power,
        laws: law_powers,
    };
    (comparison, powers)
}

/// The chance a row not yet called is called by the last planned repeat, if its Δ so far is
/// the truth, at the level it needs when it is the only effect.
fn row_conditional_power(row: &Row, looks: &sequential::Looks, level: f64) -> f64 {
    let Some(delta) = row.delta else { return 0.0 };
    // No outcome of this many samples could reach the level, however many repeats follow.
    if row.smallest_p > level {
        return 0.0;
    }
    let now = looks.at.last().copied().unwrap_or(0);
    // One repeat cannot measure the repeat-to-repeat noise (a variance floor stands in for it).
    if now <= 1 {
        return 1.0;
    }
    sequential::conditional_power(
        sequential::RowSoFar {
            delta,
            samples: row.samples,
            between_samples: row.between_samples.unwrap_or(0.0),
            between_repeats: row.between_repeats,
        },
        now,
        looks.planned,
        level,
    )
}

/// The rows of a comparison that keep a sequential run going: neither called nor settled. A
/// category or the total is settled when either outcome is called, or both are unlikely to be.
fn open_rows(categories: &[Row], total: &Row, laws: &[Row]) -> Vec<String> {
    let likely = |p: Option<f64>| p.is_some_and(|p| p >= sequential::FUTILITY);
    let called = |v: Verdict| matches!(v, Verdict::Better | Verdict::Worse | Verdict::Mixed);
    let mut open = Vec::new();
    for row in categories.iter().chain([total]) {
        let held_likely = row
            .held
            .as_ref()
            .is_some_and(|h| likely(h.conditional_power));
        if !called(row.verdict) && (likely(row.conditional_power) || held_likely) {
            open.push(row.name.clone());
        }
    }
    for law in laws {
        if !called(law.verdict) && likely(law.conditional_power) {
            open.push(law.name.clone());
        }
    }
    open
}

/// Gives a pass-rate row its laws-held companion and the verdict both make together: a change
/// either shows is the row's, and changes in opposite directions make it mixed.
fn attach_held(row: &mut Row, held: &Row) {
    if held.samples == 0 {
        return;
    }
    let held_verdict = match held.verdict {
        v @ (Verdict::Better | Verdict::Worse) => v,
        _ => Verdict::NoChange,
    };
    row.held = Some(HeldShare {
        reference: held.reference.rate.unwrap_or(0.0),
        treatment: held.treatment.rate.unwrap_or(0.0),
        delta: held.delta.unwrap_or(0.0),
        interval: held.interval,
        p_value: held.p_value,
        p_adjusted: held.p_adjusted,
        verdict: held_verdict,
        conditional_power: held.conditional_power,
    });
    row.verdict = match (row.verdict, held_verdict) {
        (Verdict::Better, Verdict::Worse) | (Verdict::Worse, Verdict::Better) => Verdict::Mixed,
        (Verdict::Better | Verdict::Worse, _) => row.verdict,
        (_, v @ (Verdict::Better | Verdict::Worse)) => v,
        (v, _) => v,
    };
}

/// One comparison's rows before its family is tested.
struct RawComparison {
    name: String,
    treatment: Arm,
    categories: Vec<RawRow>,
    total: RawRow,
    laws: Vec<RawRow>,
    /// The categories and the total on the share of laws held, in the same order.
    /// Empty when no run recorded its laws: the share would only repeat the pass.
    held_categories: Vec<RawRow>,
    held_total: Option<RawRow>,
    law_failures: Vec<LawFailures>,
}

fn raw_comparison(
    runs: &BTreeMap<PairKey<'_>, BTreeMap<Arm, &Outcome>>,
    name: &str,
    reference: Arm,
    treatment: Arm,
    effort: Effort,
) -> RawComparison {
    let mut samples: BTreeMap<&str, SampleRuns> = BTreeMap::new();
    // Per category: pairs with a gap on either side (scored), runs without a partner.
    let mut tallies: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for ((category, sample_id, repeat), arms) in runs {
        let tally = tallies.entry(category).or_default();
        match (arms.get(&reference), arms.get(&treatment)) {
            (Some(r), Some(t)) => {
                tally.0 += usize::from(r.gapped || t.gapped);
                samples
                    .entry(sample_id)
                    .or_insert_with(|| SampleRuns {
                        category,
                        pairs: Vec::new(),
                    })
                    .pairs
                    .push(ScoredPair {
                        repeat: *repeat,
                        reference: r,
                        treatment: t,
                    })
            }
            (None, None) => {}
            _ => tally.1 += 1,
        }
    }

    let input_for = |keep: &dyn Fn(&SampleRuns) -> bool| RowInput {
        samples: samples
            .values()
            .filter(|s| keep(s))
            .map(|s| {
                (
                    s.category,
                    s.pairs
                        .iter()
                        .map(|p| (p.repeat, p.reference, p.treatment))
                        .collect(),
                )
            })
            .collect(),
        gapped_pairs: 0,
        unpaired_runs: 0,
    };
    let held_name = format!("{name}/held");
    // Journals that did not record which laws applied have no graded outcome beyond the pass.
    let graded = samples
        .values()
        .flat_map(|s| &s.pairs)
        .any(|p| !p.reference.applied_laws.is_empty() || !p.treatment.applied_laws.is_empty());

    let mut categories = Vec::new();
    let mut held_categories = Vec::new();
    for (category, &(gapped, unpaired)) in &tallies {
        let mut input = input_for(&|s: &SampleRuns| s.category == *category);
        input.gapped_pairs = gapped;
        input.unpaired_runs = unpaired;
        categories.push(raw_row(
            name,
            category,
            (reference, treatment),
            &input,
            Measure::Pass,
            effort,
        ));
        if graded {
            held_categories.push(
                raw_row(
                    &held_name,
                    category,
                    (reference, treatment),
                    &input,
                    Measure::LawsHeld,
                    effort,
                )
                .in_group(3),
            );
        }
    }

    let mut total_input = input_for(&|_| true);
    total_input.gapped_pairs = tallies.values().map(|t| t.0).sum();
    total_input.unpaired_runs = tallies.values().map(|t| t.1).sum();
    let total = raw_row(
        name,
        "total",
        (reference, treatment),
        &total_input,
        Measure::Pass,
        effort,
    )
    .in_group(1);
    let held_total = graded.then(|| {
        raw_row(
            &held_name,
            "total",
            (reference, treatment),
            &total_input,
            Measure::LawsHeld,
            effort,
        )
        .in_group(4)
    });

    let law_names: BTreeSet<&str> = samples
        .values()
        .flat_map(|s| s.pairs.iter())
        .flat_map(|p| {
            p.reference
                .applied_laws
                .iter()
                .chain(&p.treatment.applied_laws)
        })
        .map(String::as_str)
        .collect();
    let laws: Vec<RawRow> = law_names
        .iter()
        .map(|law| {
            let applies = |s: &SampleRuns| {
                s.pairs.iter().any(|p| {
                    p.reference.applied_laws.iter().any(|l| l == law)
                        || p.treatment.applied_laws.iter().any(|l| l == law)
                })
            };
            let input = input_for(&applies);
            raw_row(
                &format!("{name}/law"),
                law,
                (reference, treatment),
                &input,
                Measure::Law(law),
                effort,
            )
            .in_group(2)
        })
        .collect();

    RawComparison {
        name: name.to_string(),
        treatment,
        categories,
        total,
        laws,
        held_categories,
        held_total,
        law_failures: law_failures(samples.values()),
    }
}

impl RawComparison {
    /// Every row its family tests, in the family's order.
    fn tested(&self) -> impl Iterator<Item = &RawRow> {
        self.categories
            .iter()
            .chain([&self.total])
            .chain(&self.laws)
            .chain(&self.held_categories)
            .chain(&self.held_total)
    }
}

/// A row before its family is known, with what its power simulation needs.
struct RawRow {
    row: Row,
    /// Per sample: passes of both arms, and scored repeats (pass-or-fail rows only).
    samples: Vec<(usize, usize, usize)>,
    /// Per sample: its id and its difference d, for the family's joint flips.
    columns: Vec<(String, f64)>,
    /// The outcome is pass or fail (a graded row has no power model).
    binary: bool,
    seed: u64,
    /// Which of the family's groups the row is in: categories, total, laws, then both again on
    /// the share of laws held (a category's two rows share its name).
    group: usize,
}

impl RawRow {
    fn key(&self) -> (usize, &str) {
        (self.group, &self.row.name)
    }

    fn in_group(mut self, group: usize) -> RawRow {
        self.group = group;
        self
    }
}

/// What a row measures of each run.
#[derive(Clone, Copy)]
enum Measure<'a> {
    /// Every applicable law held (and the run did not error).
    Pass,
    /// The share of applicable laws that held.
    LawsHeld,
    /// One law held.
    Law(&'a str),
}

impl Measure<'_> {
    fn score(self, outcome: &Outcome) -> f64 {
        match self {
            Measure::Pass => f64::from(u8::from(outcome.scored_pass())),
            Measure::LawsHeld => outcome.laws_held_share(),
            Measure::Law(law) => f64::from(u8::from(outcome.law_held(law))),
        }
    }

    /// The score is only ever 0 or 1.
    fn binary(self) -> bool {
        !matches!(self, Measure::LawsHeld)
    }
}

/// Everything of a row that does not depend on its family: rates, Δ, interval, raw p and the
/// variance figures. Level, adjusted p, MDE and verdict come in [`finish_row`].
fn raw_row(
    comparison: &str,
    name: &str,
    (reference, treatment): (Arm, Arm),
    input: &RowInput,
    measure: Measure,
    effort: Effort,
) -> RawRow {
    let score = |o: &Outcome| measure.score(o);
    let binary = measure.binary();
    let passed = |o: &Outcome| score(o) >= 1.0;
    // Per sample: scored repeats m, reference and treatment scores summed over repeats.
    let sums: Vec<(&str, usize, f64, f64)> = input
        .samples
        .iter()
        .map(|(category, repeats)| {
            let reference_sum: f64 = repeats.iter().map(|(_, r, _)| score(r)).sum();
            let treatment_sum: f64 = repeats.iter().map(|(_, _, t)| score(t)).sum();
            (*category, repeats.len(), reference_sum, treatment_sum)
        })
        .collect();
    let counts: Vec<(&str, usize, usize, usize)> = sums
        .iter()
        .map(|&(c, m, r, t)| (c, m, r.round() as usize, t.round() as usize))
        .collect();
    let n = counts.len();
    let differences: Vec<f64> = sums
        .iter()
        .map(|&(_, m, r, t)| (t - r) / m as f64)
        .collect();
    let columns: Vec<(String, f64)> = input
        .samples
        .iter()
        .zip(&differences)
        .map(|((_, repeats), &d)| (repeats[0].1.sample_id.clone(), d))
        .collect();

    let mut strata: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (&(category, ..), &d) in counts.iter().zip(&differences) {
        strata.entry(category).or_default().push(d);
    }
    let strata: Vec<Vec<f64>> = strata.into_values().collect();
    let seed = method::seed_for(&[comparison, name]);

    // The differences as integers over the least common multiple of the repeat counts.
    let denominator = counts
        .iter()
        .fold(1usize, |l, &(_, m, ..)| method::lcm(l, m));
    let numerators: Vec<i64> = counts
        .iter()
        .map(|&(_, m, r, t)| (t as i64 - r as i64) * (denominator / m) as i64)
        .collect();

    let delta = (n > 0).then(|| differences.iter().sum::<f64>() / n as f64);
    // The rescaled bootstrap can reach past what a difference of pass rates can be.
    let interval =
        method::bootstrap_mean_interval(&strata, effort.bootstrap_resamples, CONFIDENCE, seed).map(
            |i| Interval {
                low: i.low.max(-1.0),
                high: i.high.min(1.0),
            },
        );
    // A graded row's p comes from the family's flips; a pass-or-fail row's is exact when the
    // distribution fits in its table.
    let (p_value, p_exact) = if binary {
        method::sign_flip(&numerators, seed)
    } else {
        (1.0, false)
    };

    // Variance of d, pooled within categories.
    let df = n.saturating_sub(strata.len());
    let within: f64 = strata
        .iter()
        .map(|s| {
            let mean = s.iter().sum::<f64>() / s.len() as f64;
            s.iter().map(|d| (d - mean).powi(2)).sum::<f64>()
        })
        .sum();
    let observed = (df > 0).then(|| within / df as f64);
    let runs: usize = counts.iter().map(|c| c.1).sum();
    let mean_repeats = if n > 0 { runs as f64 / n as f64 } else { 0.0 };
    let passes: usize = counts.iter().map(|c| c.2 + c.3).sum();
    let pooled = (passes as f64 + mean_repeats) / (2.0 * runs as f64 + 2.0 * mean_repeats);
    let floor = 2.0 * pooled * (1.0 - pooled) / mean_repeats;
    let resolution = 1.0 / (n as f64 * mean_repeats * mean_repeats);
    let (variance, mde_floored) = match observed {
        Some(v) if v < resolution => (Some(v.max(floor)), floor > v),
        other => (other, false),
    };

    // Repeat-to-repeat noise: per-repeat differences around their sample's mean.
    let (mut squares, mut degrees) = (0.0, 0usize);
    for (_, repeats) in &input.samples {
        let per_repeat: Vec<f64> = repeats
            .iter()
            .map(|(_, r, t)| score(t) - score(r))
            .collect();
        let mean = per_repeat.iter().sum::<f64>() / per_repeat.len() as f64;
        squares += per_repeat.iter().map(|e| (e - mean).powi(2)).sum::<f64>();
        degrees += per_repeat.len() - 1;
    }
    let (between_samples, between_repeats) = match (variance, degrees) {
        (Some(v), _) if mde_floored => (Some(0.0), Some(v * mean_repeats)),
        (Some(v), d) if d > 0 => {
            let noise = squares / d as f64;
            (Some((v - noise / mean_repeats).max(0.0)), Some(noise))
        }
        (Some(_), _) => (None, None),
        (None, _) => (None, None),
    };

    let mean_score = |side: &dyn Fn(&Run) -> f64| -> Option<f64> {
        (n > 0).then(|| {
            input
                .samples
                .iter()
                .map(|(_, repeats)| repeats.iter().map(side).sum::<f64>() / repeats.len() as f64)
                .sum::<f64>()
                / n as f64
        })
    };
    let mut reference_summary = arm_summary(
        reference,
        &input.samples,
        &|x| passed(x.1),
        &|x| x.1.errored,
        &|x| x.1.gapped,
    );
    let mut treatment_summary = arm_summary(
        treatment,
        &input.samples,
        &|x| passed(x.2),
        &|x| x.2.errored,
        &|x| x.2.gapped,
    );
    if !binary {
        reference_summary.rate = mean_score(&|x| score(x.1));
        treatment_summary.rate = mean_score(&|x| score(x.2));
    }

    let row = Row {
        name: name.to_string(),
        samples: n,
        pairs: runs,
        reference: reference_summary,
        treatment: treatment_summary,
        delta,
        interval,
        p_value,
        p_exact,
        p_adjusted: p_value,
        level: ALPHA,
        smallest_p: if binary {
            method::smallest_sign_flip_p(n)
        } else {
            method::smallest_sign_flip_p(differences.iter().filter(|d| **d != 0.0).count())
        },
        mde: None,
        mde_floored,
        mde_rise: None,
        mde_decline: None,
        held: None,
        variance,
        degrees_of_freedom: df,
        step: if n > 0 {
            2.0 / (n as f64 * denominator as f64)
        } else {
            0.0
        },
        between_samples,
        between_repeats,
        repeats_for_target: RepeatsNeeded::Unknown,
        verdict: Verdict::NoData,
        conditional_power: None,
        gapped_pairs: input.gapped_pairs,
        unpaired_runs: input.unpaired_runs,
    };
    RawRow {
        row,
        samples: counts.iter().map(|&(_, m, r, t)| (r, t, m)).collect(),
        columns,
        binary,
        seed: method::seed_for(&[comparison, name, "power"]),
        group: 0,
    }
}

/// The rule documented at the top of this module. `critical` is the raw p a row needs when it
/// is its family's only change (the level its MDE is computed at), `family_level` the
/// family's error rate, `p_adjusted` the row's adjusted p, `monte_carlo` its raw p over the
/// family's flips (the p a graded row reports).
#[allow(clippy::too_many_arguments)]
fn finish_row(
    raw: RawRow,
    critical: f64,
    family_level: f64,
    p_adjusted: f64,
    called: bool,
    monte_carlo: f64,
    with_power: bool,
) -> (Row, RowPower) {
    let RawRow {
        mut row,
        samples,
        binary,
        seed,
        ..
    } = raw;
    row.level = critical;
    row.p_adjusted = p_adjusted;
    if !binary {
        row.p_value = monte_carlo;
    }
    if row.samples == 0 {
        row.verdict = Verdict::NoData;
        return (row, RowPower::Unknown);
    }
    let power = if !binary || critical <= 0.0 || !with_power {
        RowPower::Unknown
    } else if row.samples < SIMULATED_BELOW {
        // The floor does not enter a simulated MDE: the smoothed probabilities take its place.
        row.mde_floored = false;
        RowPower::Simulated(method::PowerModel::new(&samples, critical, seed))
    } else {
        match row.variance {
            Some(variance) => RowPower::Formula {
                samples: row.samples,
                variance,
                degrees_of_freedom: row.degrees_of_freedom,
                step: row.step,
                level: critical,
            },
            None => RowPower::Unknown,
        }
    };
    let reference_rate = row.reference.rate.unwrap_or(0.0);
    let (rise, decline) = match &power {
        RowPower::Simulated(model) => model.detectable_effects(POWER),
        RowPower::Formula {
            samples,
            variance,
            degrees_of_freedom,
            step,
            level,
        } => {
            let mde = method::detectable_effect(
                *samples,
                *variance,
                *degrees_of_freedom,
                *step,
                *level,
                POWER,
            );
            // A change the reference leaves no room for cannot be found, whatever the formula.
            (
                mde.filter(|m| *m <= 1.0 - reference_rate),
                mde.filter(|m| *m <= reference_rate),
            )
        }
        RowPower::Unknown => (None, None),
    };
    row.mde_rise = rise;
    row.mde_decline = decline;
    row.mde = match (rise, decline) {
        (Some(r), Some(d)) => Some(r.max(d)),
        (Some(m), None) | (None, Some(m)) => Some(m),
        (None, None) => None,
    };
    row.repeats_for_target = match (binary, row.between_samples, row.between_repeats) {
        (true, Some(tau), Some(noise)) if critical > 0.0 => {
            let df = row.degrees_of_freedom;
            let room = method::largest_variance_for(
                row.samples,
                df,
                row.step,
                TARGET_EFFECT,
                critical,
                POWER,
            );
            match room {
                Some(room) if room > tau => {
                    RepeatsNeeded::Repeats(((noise / (room - tau)).ceil() as u64).max(1))
                }
                _ => RepeatsNeeded::MoreSamples,
            }
        }
        _ => RepeatsNeeded::Unknown,
    };
    let significant = called;
    row.verdict = match row.interval {
        Some(i) if significant && i.low > 0.0 => Verdict::Better,
        Some(i) if significant && i.high < 0.0 => Verdict::Worse,
        // Even last in the step-down, facing the family's whole level, no outcome could pass.
        _ if row.smallest_p >= family_level => Verdict::TooFewSamples,
        _ => Verdict::NoChange,
    };
    (row, power)
}

fn arm_summary(
    arm: Arm,
    samples: &[(&str, Vec<Run>)],
    passed: &dyn Fn(&Run) -> bool,
    errored: &dyn Fn(&Run) -> bool,
    gapped: &dyn Fn(&Run) -> bool,
) -> ArmSummary {
    let mut per_repeat: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    let mut fractions = Vec::new();
    let (mut always_pass, mut always_fail, mut flaky, mut errors, mut gaps) = (0, 0, 0, 0, 0);
    for (_, runs) in samples {
        let passes = runs.iter().filter(|r| passed(r)).count();
        for run in runs {
            let tally = per_repeat.entry(run.0).or_default();
            tally.0 += usize::from(passed(run));
            tally.1 += 1;
            errors += usize::from(errored(run));
            gaps += usize::from(gapped(run));
        }
        fractions.push(passes as f64 / runs.len() as f64);
        match passes {
            0 => always_fail += 1,
            p if p == runs.len() => always_pass += 1,
            _ => flaky += 1,
        }
    }
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
        arm,
        rate: (!fractions.is_empty())
            .then(|| fractions.iter().sum::<f64>() / fractions.len() as f64),
        band,
        passes: per_repeat.values().map(|t| t.0).sum(),
        runs: per_repeat.values().map(|t| t.1).sum(),
        errored: errors,
        gapped: gaps,
        always_pass,
        always_fail,
        flaky,
    }
}

fn law_failures<'a>(samples: impl Iterator<Item = &'a SampleRuns<'a>>) -> Vec<LawFailures> {
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for pair in samples.flat_map(|s| s.pairs.iter()) {
        for law in &pair.reference.failed_laws {
            counts.entry(law).or_default().0 += 1;
        }
        for law in &pair.treatment.failed_laws {
            counts.entry(law).or_default().1 += 1;
        }
    }
    let mut failures: Vec<LawFailures> = counts
        .into_iter()
        .map(|(law, (reference, treatment))| LawFailures {
            law: law.to_string(),
            reference,
            treatment,
        })
        .collect();
    // Stable sort keeps the name order among equal counts.
    failures.sort_by_key(|f| std::cmp::Reverse(f.reference + f.treatment));
    failures
}

/// Samples that both passed and failed across the scored repeats of one arm (gapped runs
/// left out), for every arm.
fn flaky_samples(outcomes: &[Outcome]) -> Result<Vec<FlakySample>, StatsError> {
    let runs = index(outcomes)?;
    let mut tallies: BTreeMap<(&str, &str, Arm), (usize, usize)> = BTreeMap::new();
    for ((category, sample_id, _), arms) in &runs {
        for (arm, outcome) in arms.iter().filter(|(_, o)| !o.gapped) {
            let tally = tallies.entry((category, sample_id, *arm)).or_default();
            tally.0 += usize::from(outcome.scored_pass());
            tally.1 += 1;
        }
    }
    Ok(tallies
        .into_iter()
        .filter(|&(_, (p, n))| p > 0 && p < n)
        .map(|((category, sample_id, arm), (passes, runs))| FlakySample {
            sample_id: sample_id.to_string(),
            category: category.to_string(),
            arm,
            passes,
            runs,
        })
        .collect())
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
            compare_with_power(outcomes, "wording", Arm::Baseline, Arm::Variant).unwrap();
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
        let outcomes = runs("c", 10, 1, |_, _, arm| arm == Arm::Variant);
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
        let outcomes = runs("c", 4, 5, |_, _, arm| arm == Arm::Variant);
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
        let mut outcomes = runs("a", 12, 1, |_, _, arm| arm == Arm::Variant);
        outcomes.extend(runs("b", 6, 1, |_, _, arm| arm == Arm::Variant));
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
            0..=2 => arm == Arm::Variant,
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
            (0..=5, Arm::Variant) => r == 0,
            (6..=8, Arm::Variant) => true,
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
        let mut outcomes = runs("c", 10, 1, |_, _, arm| arm == Arm::Variant);
        // Two variant runs met a gap: they stay in the rates and the test, as judged.
        for o in outcomes
            .iter_mut()
            .filter(|o| o.arm == Arm::Variant)
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
            .filter(|o| o.arm == Arm::Variant && !o.passed)
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
            let variant_slip = arm == Arm::Variant && s == 1 && r == 0;
            let baseline_slip = arm == Arm::Baseline && s == 0 && r == 1;
            !(variant_slip || baseline_slip)
        });
        let summary = summarize(&outcomes).unwrap();
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
            r#"{"sample_id":"s","category":"c","arm":"control","repeat":2,"passed":true}"#,
        )
        .unwrap();
        assert_eq!(
            (o.arm, o.repeat, o.gapped, o.errored, o.applied_laws.len()),
            (Arm::Control, 2, false, false, 0)
        );
    }
}
