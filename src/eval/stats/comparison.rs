//! One comparison of two arms: its rows gathered from the paired runs, tested together as one
//! family, and given their verdicts.

use std::collections::{BTreeMap, BTreeSet};

use super::outcome::Outcome;
use super::pairs::{index, Paired, RowInput, Runs, SampleRuns, StatsError};
use super::results::{Comparison, HeldShare, LawFailures, Row, Verdict};
use super::rows::{finish_row, raw_row, Measure, RawRow};
use super::{family, method, sequential, Effort, ALPHA};
use crate::eval::arm::Arm;

/// Compares `treatment` against `reference` over the outcomes of a run; `name` names the
/// comparison (and seeds its bootstrap).
pub fn compare(
    outcomes: &[Outcome],
    name: &str,
    reference: Arm,
    treatment: Arm,
) -> Result<Comparison, StatsError> {
    let names = [name.to_string()];
    let mut one = compare_many_looked(
        outcomes,
        &names,
        reference,
        &[treatment],
        Effort::REPORT,
        None,
    )?;
    Ok(one.remove(0))
}

/// Compares each of `treatments` against `reference` (the comparison named by the same place
/// in `names`). Every row the reader sees of one comparison (its categories on the pass rate and
/// on the share of laws held, the total on both, every law) is one family under the joint
/// step-down test of [`family`]; with several treatments each family gets α over their number
/// (Bonferroni), so the run as a whole calls something by chance in at most α of runs, however
/// many variants and rows it shows.
///
/// Under the looks of a sequential run when `looks` is given: the outcomes are those of its
/// last look, and each earlier look sees the repeats it had.
pub fn compare_many_looked(
    outcomes: &[Outcome],
    names: &[String],
    reference: Arm,
    treatments: &[Arm],
    effort: Effort,
    looks: Option<&sequential::Looks>,
) -> Result<Vec<Comparison>, StatsError> {
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
) -> Comparison {
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
    let before = design.as_ref().map_or(&[][..], |(_, before)| &before[..]);
    let (matrix, mut matrices) = family_matrices(&tested, before);
    let family_level = ALPHA / families as f64;
    let seed = method::seed_for(&[&name, "family"]);
    let test = family::step_down_min_p(&matrix, effort.joint_flips, family_level, seed);
    // A sequential run calls a row when it crosses its look's boundary ([`sequential`]).
    let looks = design.map(|(looks, _)| looks);
    let called: Vec<bool> = match looks {
        None => test
            .adjusted
            .iter()
            .map(|&a| a * (families as f64) < ALPHA)
            .collect(),
        Some(looks) => {
            matrices.push(matrix);
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
            let mut row = finish_row(
                raw,
                level,
                family_level,
                p_adjusted,
                called,
                monte_carlo,
                effort.power,
            );
            if let Some(looks) = looks {
                row.conditional_power = Some(if called {
                    1.0
                } else {
                    row_conditional_power(&row, looks, level)
                });
            }
            row
        });
    let mut category_rows: Vec<Row> = finished.by_ref().take(c).collect();
    let mut total = finished.next().expect("the total is tested");
    let law_rows: Vec<Row> = finished.by_ref().take(l).collect();
    let held_results: Vec<Row> = finished.by_ref().take(h).collect();
    let held_total = has_held_total.then(|| finished.next().expect("the held total"));

    for (row, held) in category_rows.iter_mut().zip(held_results) {
        attach_held(row, &held);
    }
    if let Some(held_total) = &held_total {
        attach_held(&mut total, held_total);
    }
    mix_total_of_opposite_categories(&mut total, &category_rows);
    let open_rows = match looks {
        Some(_) => open_rows(&category_rows, &total, &law_rows),
        None => Vec::new(),
    };
    Comparison {
        name,
        label: None,
        reference,
        treatment,
        categories: category_rows,
        total,
        laws: law_rows,
        law_failures,
        open_rows,
    }
}

/// The family's per-sample differences, one row per tested row in its order and one column per
/// sample of the last look: for the last look, and for each earlier look (`before`), whose
/// rows are matched by key and whose missing samples count 0.
fn family_matrices(
    tested: &[RawRow],
    before: &[RawComparison],
) -> (Vec<Vec<f64>>, Vec<Vec<Vec<f64>>>) {
    let keys: Vec<(usize, &str)> = tested.iter().map(RawRow::key).collect();
    let samples: BTreeSet<&str> = tested
        .iter()
        .flat_map(|r| r.columns.iter().map(|(id, _)| id.as_str()))
        .collect();
    let column: BTreeMap<&str, usize> = samples.iter().enumerate().map(|(i, &s)| (s, i)).collect();
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
    let last = matrix_of(&tested.iter().collect::<Vec<_>>());
    let earlier = before
        .iter()
        .map(|b| matrix_of(&b.tested().collect::<Vec<_>>()))
        .collect();
    (last, earlier)
}

/// A total over categories that moved apart says so rather than averaging them away.
fn mix_total_of_opposite_categories(total: &mut Row, categories: &[Row]) {
    let directions: BTreeSet<Verdict> = categories
        .iter()
        .flat_map(|r| [r.pass_verdict(), r.held.as_ref().map(|h| h.verdict)])
        .flatten()
        .filter(|v| matches!(v, Verdict::Better | Verdict::Worse))
        .collect();
    if directions.len() == 2 {
        total.verdict = Verdict::Mixed;
    }
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
pub(super) struct RawComparison {
    name: String,
    treatment: Arm,
    pub(super) categories: Vec<RawRow>,
    pub(super) total: RawRow,
    pub(super) laws: Vec<RawRow>,
    /// The categories and the total on the share of laws held, in the same order.
    /// Empty when no run recorded its laws: the share would only repeat the pass.
    held_categories: Vec<RawRow>,
    held_total: Option<RawRow>,
    law_failures: Vec<LawFailures>,
}

/// Every row of one comparison from a run's paired outcomes, before its family is tested.
pub(super) fn raw_comparison(
    runs: &Runs<'_>,
    name: &str,
    reference: Arm,
    treatment: Arm,
    effort: Effort,
) -> RawComparison {
    let paired = Paired::new(runs, reference, treatment);
    let row = |comparison: &str, row: &str, input: &RowInput, measure: Measure| {
        raw_row(
            comparison,
            row,
            (reference, treatment),
            input,
            measure,
            effort,
        )
    };
    let held_name = format!("{name}/held");
    // Journals that did not record which laws applied have no graded outcome beyond the pass.
    let graded = paired.graded();

    let mut categories = Vec::new();
    let mut held_categories = Vec::new();
    for (category, &(gapped, unpaired)) in &paired.tallies {
        let input = RowInput {
            gapped_pairs: gapped,
            unpaired_runs: unpaired,
            ..paired.input(&|s: &SampleRuns| s.category == *category)
        };
        categories.push(row(name, category, &input, Measure::Pass));
        if graded {
            held_categories.push(row(&held_name, category, &input, Measure::LawsHeld).in_group(3));
        }
    }

    let total_input = RowInput {
        gapped_pairs: paired.tallies.values().map(|t| t.0).sum(),
        unpaired_runs: paired.tallies.values().map(|t| t.1).sum(),
        ..paired.input(&|_| true)
    };
    let total = row(name, "total", &total_input, Measure::Pass).in_group(1);
    let held_total =
        graded.then(|| row(&held_name, "total", &total_input, Measure::LawsHeld).in_group(4));

    // One row per law, over the samples it applied to.
    let law_name = format!("{name}/law");
    let laws: Vec<RawRow> = paired
        .law_names()
        .into_iter()
        .map(|law| {
            let input = paired.input(&|s: &SampleRuns| s.applies(law));
            row(&law_name, law, &input, Measure::Law(law)).in_group(2)
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
        law_failures: law_failures(&paired),
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

/// Scored runs of each arm in which each law failed, most failed first.
fn law_failures(paired: &Paired) -> Vec<LawFailures> {
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for pair in paired.pairs() {
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
