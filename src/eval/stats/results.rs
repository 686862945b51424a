//! What a comparison reports: verdicts, rows, comparisons and the run's summary, and how a
//! row's verdict reads.

use serde::{Deserialize, Serialize};

use super::method::Interval;
use super::{sequential, ALPHA};
use crate::eval::arm::Arm;

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

/// How many repeats would bring the row's MDE down to [`TARGET_EFFECT`](super::TARGET_EFFECT).
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
    /// the run ([`family`](super::family)): a verdict needs it below [`ALPHA`]. Always a Monte-Carlo figure.
    pub p_adjusted: f64,
    /// The raw p below which the row is called when it is the only change of its family.
    pub level: f64,
    /// The smallest p the test could give with this many samples.
    pub smallest_p: f64,
    /// Minimum detectable effect at [`POWER`](super::POWER) power and `level`, as a fraction.
    pub mde: Option<f64>,
    /// The variance behind the MDE is the floor, not the observed one.
    pub mde_floored: bool,
    /// The smallest rise and decline found with [`POWER`](super::POWER) power, each `None` when the
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

/// The label of the wording comparison of an A/A run: the baseline against a second draw of
/// itself, where no variant ran.
pub const A_A_LABEL: &str = "A/A";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub alpha: f64,
    pub confidence: f64,
    pub power: f64,
    pub bootstrap_resamples: usize,
    /// Joint sign flips behind every adjusted p ([`family`](super::family)).
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
    /// The laws the pack marks as what the skill exists for; each wording's headline leads
    /// with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub purpose_laws: Vec<String>,
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
