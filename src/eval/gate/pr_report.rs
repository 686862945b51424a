//! The one report of a whole PR that `plan --run` writes: the headline first (each command
//! carried out, and whether it passed), the runs that could not have failed (every law held in
//! the control), the skills no pack measures and what the plan left to do by hand, then each
//! pack's own report as its run wrote it.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::Plan;

/// One command `plan --run` carried out.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Index into the plan's checks.
    pub check: usize,
    /// The command as a shell would read it.
    pub command: String,
    /// Its exit status (`None`: ended by a signal).
    pub exit: Option<i32>,
    /// The run folder it wrote, when it wrote one.
    pub run_folder: Option<PathBuf>,
    /// That folder's `report.md`.
    pub report: Option<String>,
    /// The last line the command wrote on stderr: why it failed, when it did.
    pub last_error_line: Option<String>,
    /// Why the run could not have failed for its skill (`control::vacuous_control`), when so.
    pub vacuous: Option<String>,
}

fn verdict(o: &Outcome) -> String {
    match o.exit {
        Some(0) if o.vacuous.is_some() => "vacuous (every law held in the control)".into(),
        Some(0) => "passed".into(),
        Some(3) => "worse (--fail-on worse)".into(),
        Some(4) => "no skill effect (--fail-on no-skill-effect)".into(),
        Some(code) => match &o.last_error_line {
            Some(line) => format!("failed (exit {code}: {})", line.replace('|', "\\|")),
            None => format!("failed (exit {code})"),
        },
        None => "ended by a signal".into(),
    }
}

/// The markdown of the PR's report.
pub fn render(plan: &Plan, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let short = &plan.base[..plan.base.len().min(12)];
    let _ = writeln!(out, "# Skill PR against {short} ({})\n", plan.base_how);
    let failed = outcomes
        .iter()
        .filter(|o| o.exit != Some(0) || o.vacuous.is_some())
        .count();
    let _ = writeln!(
        out,
        "**{} of {} command{} passed.**\n",
        outcomes.len() - failed,
        outcomes.len(),
        if outcomes.len() == 1 { "" } else { "s" }
    );
    if !outcomes.is_empty() {
        let _ = writeln!(out, "| pack | provenance | command | result |");
        let _ = writeln!(out, "| --- | --- | --- | --- |");
        for o in outcomes {
            let check = &plan.checks[o.check];
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {} |",
                check.pack,
                check.provenance,
                o.command.replace('|', "\\|"),
                verdict(o)
            );
        }
        out.push('\n');
    }
    for o in outcomes {
        if let Some(why) = &o.vacuous {
            let check = &plan.checks[o.check];
            let _ = writeln!(
                out,
                "- vacuous: {} ({}): {why}",
                check.pack, check.provenance
            );
        }
    }
    for u in &plan.uncovered {
        let _ = writeln!(
            out,
            "- not covered: skill `{}` ({}): no pack measures it",
            u.skill, u.path
        );
    }
    let by_hand: Vec<_> = plan.checks.iter().filter(|c| c.argv.is_empty()).collect();
    for check in &by_hand {
        let _ = writeln!(
            out,
            "- to do by hand: {} ({}): {}: `{}`",
            check.pack,
            check.provenance,
            check.why,
            check.commands.join("`; `")
        );
    }
    for o in outcomes {
        let Some(report) = &o.report else { continue };
        let check = &plan.checks[o.check];
        let _ = writeln!(out, "\n## {}: `{}`\n", check.pack, o.command);
        if let Some(folder) = &o.run_folder {
            let _ = writeln!(out, "Run folder: `{}`\n", folder.display());
        }
        // The run's own headings sit one level below the PR's.
        for line in report.lines() {
            if line.starts_with('#') {
                let _ = writeln!(out, "##{line}");
            } else {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}
