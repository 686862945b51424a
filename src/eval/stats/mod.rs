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
//!
//! # Where the code is
//!
//! `pairs` pairs two arms' runs by (sample, repeat); `rows` makes a row of them (its rates, Δ,
//! interval and raw p, then its verdict), with its MDE from `mde`; `comparison` tests a
//! comparison's rows as one family; `summary` makes a run's comparisons. `results` holds the
//! types they report, `outcome` what they read of a judged run (the arms themselves are
//! `crate::eval::arm`). `powers` gives the simulation tests each row's power at any change;
//! `reach` the smallest category a verdict can be reached in; [`method`], [`family`] and
//! [`sequential`] are the numerical parts.

pub mod family;
pub mod method;
pub mod reach;
pub mod sequential;

mod comparison;
mod mde;
mod outcome;
mod pairs;
mod powers;
mod results;
mod rows;
mod summary;
#[cfg(test)]
mod tests;

pub use comparison::{compare, compare_many_looked};
pub use mde::RowPower;
pub use method::Interval;
pub use outcome::Outcome;
pub use pairs::StatsError;
pub use powers::{compare_many_with_power, compare_many_with_power_at, compare_with_power, Powers};
pub use results::{
    ArmSummary, Band, Comparison, FlakySample, HeldShare, LawFailures, RepeatsNeeded, Row, Summary,
    Verdict, A_A_LABEL,
};
pub use summary::{any_worse, summarize, summarize_looked, summarize_with, wording_name};

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
