//! Two runs of the same pack side by side (`skilleval compare RUN_A RUN_B`): before and after a
//! change of model, harness or settings. One arm of each run is compared, the same in both: the
//! variant when both runs had one, else the baseline (or the one `--arm` names). Runs of that
//! arm pair up by (sample, repeat), and the paired difference, RUN_B's arm minus RUN_A's, goes
//! through the same statistics as a run's own comparisons (`stats::compare`: per-sample
//! differences, bootstrap interval, sign-flip test, the one family, MDE). Runs that cannot pair up are
//! refused in one line naming what differs.

use std::collections::BTreeSet;

use anyhow::bail;
use serde::Serialize;

use super::figures::rows_of;
use super::headline::movements;
use super::table::named_table;
use crate::eval::arm::Arm;
use crate::eval::record::manifest::Manifest;
use crate::eval::record::RunRecord;
use crate::eval::run_summary::outcome;
use crate::eval::stats::{self, Comparison, Outcome};

/// The comparison of two runs.
#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    pub run_a: String,
    pub run_b: String,
    /// The arm compared in both runs.
    pub arm: Arm,
    /// Manifest entries in which the runs differ (the model, the seeds…): what the comparison
    /// measures, as far as the manifests tell.
    pub differences: Vec<&'static str>,
    /// Runs of the arm in RUN_A and in RUN_B whose (sample, repeat) the other run lacks: left
    /// out before the comparison.
    pub left_out: [usize; 2],
    /// Categories with runs in only one of the two.
    pub categories_in_one_run: Vec<String>,
    /// RUN_A's arm as the reference (`baseline` in the rows), RUN_B's as the treatment
    /// (`variant`), over the (sample, repeat)s both runs hold.
    pub comparison: Comparison,
}

/// The arm compared when none is asked for: the variant when both runs had one, else the
/// baseline.
pub fn default_arm(a: &Manifest, b: &Manifest) -> Arm {
    if a.variant.is_some() && b.variant.is_some() {
        Arm::Variant(0)
    } else {
        Arm::Baseline
    }
}

/// Compares `arm` (by default [`default_arm`]) of `b` against the same arm of `a`.
pub fn compare_runs(
    a: &RunRecord,
    b: &RunRecord,
    arm: Option<Arm>,
) -> anyhow::Result<RunComparison> {
    let (ma, mb) = (&a.manifest, &b.manifest);
    let (ia, ib) = (&ma.run_id, &mb.run_id);
    if ma.pack != mb.pack {
        bail!(
            "cannot compare {ia} and {ib}: they ran different packs (`{}` and `{}`)",
            ma.pack,
            mb.pack
        );
    }
    let arm = arm.unwrap_or_else(|| default_arm(ma, mb));
    for m in [ma, mb] {
        if arm == Arm::Variant(0) && m.variant.is_none() {
            bail!(
                "cannot compare the variant arm: {} is an A/A run (no variant); use --arm baseline",
                m.run_id
            );
        }
        if arm == Arm::Control && !m.control {
            bail!(
                "cannot compare the control arm: {} ran without it (--no-control)",
                m.run_id
            );
        }
    }
    let keys = |r: &RunRecord| -> BTreeSet<(String, u32)> {
        r.entries
            .iter()
            .filter(|e| e.arm == arm)
            .map(|e| (e.sample_id.clone(), e.repeat))
            .collect()
    };
    let (ka, kb) = (keys(a), keys(b));
    let common: BTreeSet<&(String, u32)> = ka.intersection(&kb).collect();
    if common.is_empty() {
        bail!(
            "cannot compare {ia} and {ib}: no (sample, repeat) of the {} arm in common ({} in {ia}, {} in {ib})",
            arm.name(),
            ka.len(),
            kb.len()
        );
    }
    let categories = |r: &RunRecord| -> BTreeSet<String> {
        r.entries
            .iter()
            .filter(|e| e.arm == arm)
            .map(|e| e.category.clone())
            .collect()
    };
    let (ca, cb) = (categories(a), categories(b));
    let categories_in_one_run = ca.symmetric_difference(&cb).cloned().collect();
    let relabel = |r: &RunRecord, as_arm: Arm| -> Vec<Outcome> {
        r.entries
            .iter()
            .filter(|e| e.arm == arm && common.contains(&(e.sample_id.clone(), e.repeat)))
            .map(|e| Outcome {
                arm: as_arm,
                ..outcome(e)
            })
            .collect()
    };
    let mut outcomes = relabel(a, Arm::Baseline);
    outcomes.extend(relabel(b, Arm::Variant(0)));
    let comparison = stats::compare(&outcomes, "compare", Arm::Baseline, Arm::Variant(0))
        .map_err(|e| anyhow::anyhow!("cannot compare {ia} and {ib}: {e} (their corpora differ)"))?;
    Ok(RunComparison {
        run_a: ia.clone(),
        run_b: ib.clone(),
        arm,
        differences: differences(ma, mb, arm),
        left_out: [ka.len() - common.len(), kb.len() - common.len()],
        categories_in_one_run,
        comparison,
    })
}

/// The manifest entries that differ between the runs and bear on `arm`.
fn differences(a: &Manifest, b: &Manifest, arm: Arm) -> Vec<&'static str> {
    let body = |m: &Manifest| match arm {
        Arm::Control => m.control_body_sha256.clone(),
        Arm::Baseline => Some(m.baseline_body_sha256.clone()),
        Arm::Variant(i) => m.variant_body(usize::from(i)).map(str::to_string),
    };
    let checks = [
        ("model_sha256", a.model_sha256 == b.model_sha256),
        ("backend", a.backend.name == b.backend.name),
        (
            "llama_cpp_2_version",
            a.llama_cpp_2_version == b.llama_cpp_2_version,
        ),
        (
            "skilleval_version",
            a.skilleval_version == b.skilleval_version,
        ),
        ("skill", a.skill == b.skill),
        ("skill body", body(a) == body(b)),
        (
            "skills tree",
            a.inputs.as_ref().map(|i| &i.skills) == b.inputs.as_ref().map(|i| &i.skills),
        ),
        (
            "pack.toml",
            a.inputs.as_ref().map(|i| &i.pack) == b.inputs.as_ref().map(|i| &i.pack),
        ),
        (
            "fixtures",
            a.inputs.as_ref().map(|i| &i.fixtures) == b.inputs.as_ref().map(|i| &i.fixtures),
        ),
        ("corpus_sha256", a.corpus_sha256 == b.corpus_sha256),
        ("run_seed", a.run_seed == b.run_seed),
        ("sampling", a.sampling == b.sampling),
        ("budgets", a.budgets == b.budgets),
        ("call_format", a.call_format == b.call_format),
        ("parallel", a.parallel == b.parallel),
    ];
    checks
        .into_iter()
        .filter(|(_, same)| !same)
        .map(|(name, _)| name)
        .collect()
}

/// The comparison for the terminal: what is compared, what differs, the category table, the
/// changed rows, and the per-law table.
pub fn render(rc: &RunComparison) -> String {
    let c = &rc.comparison;
    let (a, b) = (
        format!("A {}", rc.arm.name()),
        format!("B {}", rc.arm.name()),
    );
    let mut out = format!(
        "B = {} against A = {}: the {} arm of each, paired by sample and repeat\n",
        rc.run_b,
        rc.run_a,
        rc.arm.name()
    );
    out.push_str(&if rc.differences.is_empty() {
        "The manifests agree on model, build, inputs and settings: this measures run-to-run noise.\n".to_string()
    } else {
        format!("The runs differ in: {}.\n", rc.differences.join(", "))
    });
    out.push_str(&named_table((&a, &b), &rows_of(c), true));
    out.push_str(&format!("\n{}\n", movements(c)));
    let (ea, eb) = (c.total.reference.errored, c.total.treatment.errored);
    if ea + eb > 0 {
        out.push_str(&format!(
            "Errored units (counted as failures; the journals hold why): A {ea} of {}, B {eb} of {}.\n",
            c.total.reference.runs, c.total.treatment.runs
        ));
    }
    if rc.left_out != [0, 0] {
        out.push_str(&format!(
            "Left out, with no partner in the other run: {} run(s) of A, {} of B{}.\n",
            rc.left_out[0],
            rc.left_out[1],
            if rc.categories_in_one_run.is_empty() {
                String::new()
            } else {
                format!(
                    " (categories in one run only: {})",
                    rc.categories_in_one_run.join(", ")
                )
            }
        ));
    }
    if !c.laws.is_empty() {
        out.push_str("\nPer law (pass rate of each law over the runs it applied to)\n");
        out.push_str(&named_table(
            (&a, &b),
            &c.laws.iter().collect::<Vec<_>>(),
            false,
        ));
    }
    out.push_str(
        "\nΔ: B minus A in percentage points, [95% paired bootstrap interval over samples]. p: exact \
         sign-flip permutation test over per-sample differences, (adj.) every row of the comparison \
         in one family (step-down min-P over joint sign flips). MDE: the change these runs would detect with 80% power. \
         Verdicts as in a run's report.\n",
    );
    out
}
