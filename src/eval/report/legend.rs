//! What the figures mean: the legend under every report, the rule a verdict follows (stricter
//! for a sequential run), and the repeats each category needs for the target effect.

use crate::eval::stats::{RepeatsNeeded, Summary};

/// Beyond this many repeats the report says ">100": adding samples is the practical way.
pub(super) const MANY_REPEATS: u64 = 100;

pub(super) fn legend(summary: &Summary) -> String {
    format!(
        "Rates: mean of per-sample pass rates in %, [lowest–highest across {} repeat(s)]. \
         Δ: treatment minus reference in percentage points, [{:.0}% paired bootstrap interval over \
         samples, {} resamples]. laws held: the mean share of a run's laws that held, in each arm \
         (a graded outcome that moves where samples seldom pass every law). p: sign-flip \
         permutation test over per-sample differences, exact unless marked ~ (Monte-Carlo); \
         (adj.): every row of a comparison, its categories on both outcomes, the total and every \
         law, tested as one family by a step-down min-P test over {} joint sign flips of whole \
         samples, which keeps the chance of any false verdict in the comparison under {}; with \
         several variants each gets an equal share; the skill effect is a family of its own. \
         {}; \"(laws held)\" marks one the graded outcome carried, \
         \"mixed\" changes in opposite directions. Gapped runs (a call no fixture answers) are \
         scored as judged. MDE: the change this run would detect with {:.0}% power when it is \
         the only change; where the reference leaves no room for a change that size in one \
         direction, the verdict says which direction the run could not see; * marks a variance \
         floored at the pooled pass rate's. \"inconclusive\": Δ is at least the MDE, yet the \
         test did not reach its level. \"too few samples\": no outcome of this many samples \
         could be called.",
        summary.repeats,
        summary.confidence * 100.0,
        summary.bootstrap_resamples,
        summary.joint_flips,
        summary.alpha,
        verdict_rule(summary),
        summary.power * 100.0
    )
}

/// What a row needs for a verdict. A sequential run keeps part of the budget for its later
/// looks, so there an adjusted p under the level is not enough, and the legend must say so.
pub(super) fn verdict_rule(summary: &Summary) -> String {
    match &summary.sequential {
        None => format!(
            "A verdict needs adjusted p < {} and an interval that excludes 0",
            summary.alpha
        ),
        Some(looks) => format!(
            "This run looked after each repeat ({} of {} planned), spending the budget as {}: \
             a verdict needs a row to cross its look's boundary, stricter than adjusted p < {} \
             (the adj. p shown is the one-look figure), and an interval that excludes 0",
            looks.at.last().copied().unwrap_or(0),
            looks.planned,
            looks.spending.describe(),
            summary.alpha
        ),
    }
}

/// How many repeats each category of the wording comparison needs for an MDE of the target.
pub(super) fn repeats_needed(summary: &Summary) -> String {
    let wording = &summary.wording;
    let parts: Vec<String> = wording
        .categories
        .iter()
        .chain([&wording.total])
        .map(|row| {
            let needed = match row.repeats_for_target {
                RepeatsNeeded::Repeats(r) if r > MANY_REPEATS => format!(">{MANY_REPEATS}"),
                RepeatsNeeded::Repeats(r) => r.to_string(),
                RepeatsNeeded::MoreSamples => "more samples".into(),
                RepeatsNeeded::Unknown => "?".into(),
            };
            format!("{} {needed}", row.name)
        })
        .collect();
    format!(
        "Repeats to detect {:.0} pp (wording): {}. The smallest r with MDE ≤ {:.0} pp when the \
         variance of a sample's difference is τ² + σ²_w/r: r = σ²_w / (n·((0.10 − s/2)/k)² − τ²), \
         σ²_w the repeat-to-repeat variance of one run's difference, τ² the spread of samples' \
         true differences, k = t(1 − level/2) + t(power), s the step of Δ. \"more samples\": τ² \
         alone exceeds the room, so no number of repeats gets there; \"?\": one repeat cannot \
         measure σ²_w.",
        summary.target_effect * 100.0,
        parts.join(", "),
        summary.target_effect * 100.0,
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_outcomes::known_summary;
    use super::*;

    #[test]
    fn a_sequential_run_does_not_promise_a_verdict_at_adjusted_p_under_the_level() {
        // A row at adj. p .04 stays "no change" after six looks; the legend must not say
        // otherwise.
        let mut summary = known_summary();
        assert!(legend(&summary).contains("A verdict needs adjusted p < 0.05"));
        summary.sequential = Some(crate::eval::stats::sequential::Looks {
            planned: 6,
            at: vec![1, 2, 3, 4],
            spending: crate::eval::spending::Spending::Quadratic,
        });
        let text = legend(&summary);
        assert!(
            !text.contains("A verdict needs adjusted p < 0.05"),
            "{text}"
        );
        assert!(text.contains("(4 of 6 planned)"), "{text}");
        assert!(text.contains("stricter than adjusted p < 0.05"), "{text}");
    }
}
