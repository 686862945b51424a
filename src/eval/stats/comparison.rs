//! One comparison of two arms: its rows gathered from the paired runs, tested together as one
//! family, and given their verdicts.

use std::collections::{BTreeMap, BTreeSet};

use super::arm::Arm;
use super::outcome::Outcome;
use super::pairs::{index, PairKey, RowInput, SampleRuns, ScoredPair, StatsError};
use super::results::{Comparison, HeldShare, LawFailures, Row, Verdict};
use super::rows::{finish_row, raw_row, Measure, RawRow};
use super::{family, method, sequential, Effort, ALPHA};

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
                finished.conditional_power = Some(if called {
                    1.0
                } else {
                    row_conditional_power(&finished, looks, level)
                });
            }
            finished
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
    let open_rows = match design {
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

pub(super) fn raw_comparison(
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
