//! A plan in words: the commands each check runs (from the repository's root, the base's files
//! laid out in `$BASE`), and the text `skilleval plan` prints.

use std::fmt::Write as _;

use super::{Check, CheckKind, Need, Plan};
use crate::eval::report::gaps::shell_word as quoted;

/// `skilleval ARGS…` as a shell reads it.
pub fn shell_line(args: &[String]) -> String {
    let words: Vec<String> = args.iter().map(|a| quoted(a)).collect();
    format!("skilleval {}", words.join(" "))
}

/// The skilleval commands `plan --run` carries out for `check`, as arguments (after the program
/// name); `$BASE` stands for the folder the base's files are laid out in. Checks that need an
/// earlier run, live tools or two runs compared are left to do by hand.
pub fn argv(check: &Check, skills_dir: &str) -> Vec<Vec<String>> {
    let pack = ["--pack".to_string(), check.pack.clone()];
    match check.kind {
        CheckKind::MeasureWording => {
            let Some(variant) = check.because.iter().find(|p| p.ends_with("SKILL.md")) else {
                return Vec::new();
            };
            let over_base = [
                "--skills-dir".to_string(),
                format!("$BASE/{skills_dir}"),
                "--variant".to_string(),
                variant.clone(),
            ];
            ["score", "run"]
                .into_iter()
                .map(|command| {
                    let mut args = vec![command.to_string()];
                    args.extend(pack.iter().cloned());
                    args.extend(over_base.iter().cloned());
                    args
                })
                .collect()
        }
        CheckKind::Run => {
            let mut args = vec!["run".to_string()];
            args.extend(pack);
            for variant in check
                .because
                .iter()
                .filter(|p| p.starts_with(&format!("{}/variants/", check.pack)))
            {
                args.extend(["--variant".to_string(), variant.clone()]);
            }
            vec![args]
        }
        CheckKind::Check => {
            let mut args = vec!["check".to_string()];
            args.extend(pack);
            vec![args]
        }
        CheckKind::MeasureTree | CheckKind::Record | CheckKind::Rejudge => Vec::new(),
    }
}

/// The commands that carry `check` out, `skills_dir` being the pack's skills tree.
/// `base_dir` the base's tree the changed wording is compared with (the pack's own, unless the
/// skill moved there from another).
pub fn commands(check: &Check, skills_dir: &str, base_dir: &str) -> Vec<String> {
    let pack = quoted(&check.pack);
    // `$BASE` is expanded by the shell; the path after it, which a PR names, is quoted whole.
    let base_tree = format!("\"$BASE\"/{}", quoted(skills_dir));
    let base_wording_tree = format!("\"$BASE\"/{}", quoted(base_dir));
    match check.kind {
        CheckKind::MeasureWording => {
            let variant = check
                .because
                .iter()
                .find(|p| p.ends_with("SKILL.md"))
                .map_or_else(String::new, |p| quoted(p));
            vec![
                format!("skilleval score --pack {pack} --skills-dir {base_wording_tree} --variant {variant}"),
                format!("skilleval run --pack {pack} --skills-dir {base_wording_tree} --variant {variant}"),
            ]
        }
        CheckKind::MeasureTree => vec![
            format!("skilleval run --pack {pack} --skills-dir {base_tree}    # run A: the base's skills"),
            format!("skilleval run --pack {pack}    # run B: this change's skills"),
            "skilleval compare RUN_A RUN_B --arm baseline".to_string(),
        ],
        CheckKind::Record => vec![format!("skilleval run --pack {pack} --record all")],
        CheckKind::Rejudge => {
            vec!["skilleval report RUN --rejudge    # RUN: a run of this pack from before the change".to_string()]
        }
        CheckKind::Run => {
            let variants: String = check
                .because
                .iter()
                .filter(|p| p.starts_with(&format!("{}/variants/", check.pack)))
                .map(|p| format!(" --variant {}", quoted(p)))
                .collect();
            vec![format!("skilleval run --pack {pack}{variants}")]
        }
        CheckKind::Check => vec![format!("skilleval check --pack {pack}")],
    }
}

fn need_label(need: Need) -> &'static str {
    match need {
        Need::Measure => "measure",
        Need::NoModelRun => "no model run",
        Need::Record => "record",
        Need::Rejudge => "judge again",
        Need::Run => "run",
        Need::Check => "check",
        Need::Nothing => "nothing",
        Need::Removed => "removed",
        Need::Moved => "moved",
        Need::Outside => "not read",
    }
}

/// The plan as `skilleval plan` prints it: the base, every changed path with what it needs,
/// the checks with their provenance and commands, the skills no pack measures, the refusals.
pub fn text(plan: &Plan) -> String {
    let mut out = String::new();
    let short = &plan.base[..plan.base.len().min(12)];
    let _ = writeln!(
        out,
        "plan: base {short} ({}), {} changed path{}",
        plan.base_how,
        plan.changes.len(),
        if plan.changes.len() == 1 { "" } else { "s" }
    );
    // A moved skill's files are said even when the model reads nothing new in them.
    let shown = |c: &&super::Change| c.need != Need::Nothing || c.from.is_some();
    let unread = plan.changes.iter().filter(|c| !shown(c)).count();
    for change in plan.changes.iter().filter(shown) {
        let skill = change
            .skill
            .as_ref()
            .map_or_else(String::new, |s| format!(" (skill `{s}`)"));
        let skill = match &change.from {
            Some(from) => format!("{skill} (moved from {from})"),
            None => skill,
        };
        let _ = writeln!(
            out,
            "  {}{skill}: {} — {}",
            change.path,
            need_label(change.need),
            change.why
        );
    }
    if unread > 0 {
        let _ = writeln!(
            out,
            "  {unread} other path{} no pack reads (`--json` lists them)",
            if unread == 1 { "" } else { "s" }
        );
    }
    if plan.checks.is_empty() {
        let _ = writeln!(out, "checks: none");
    } else {
        let _ = writeln!(out, "checks:");
    }
    for step in &plan.setup {
        let _ = writeln!(out, "  the base's files: {step}");
    }
    for check in &plan.checks {
        let model = if check.runs_model { "" } else { " (no model)" };
        let _ = writeln!(
            out,
            "  {} ({}){model}: {}",
            check.pack, check.provenance, check.why
        );
        for command in &check.commands {
            let _ = writeln!(out, "    {command}");
        }
    }
    for u in &plan.uncovered {
        let _ = writeln!(
            out,
            "not covered: skill `{}` ({}): no pack measures it",
            u.skill, u.path
        );
    }
    for r in &plan.refused {
        let _ = writeln!(
            out,
            "refused: {} ({}) cannot fail for skill `{}`: {}",
            r.pack, r.provenance, r.skill, r.why
        );
    }
    out
}
