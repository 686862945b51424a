//! `skilleval lint`: a skills folder against the Agent Skills format, every finding with its
//! file and line.

use std::path::PathBuf;

use clap::Args;

use crate::harness::skills::lint;

pub const EXAMPLES: &str = "Examples:
  skilleval lint packs/weather/skills
  skilleval lint packs/weather/variants/b.md     # one SKILL.md or variant file
  skilleval lint ../my-skills --strict           # warnings fail too";

#[derive(Args, Debug)]
pub struct LintArgs {
    /// A skills folder (one SKILL.md per subfolder), one skill's folder, or one SKILL.md or
    /// variant file
    pub skills_dir: PathBuf,
    /// Exit 1 on warnings too (fields the format does not define, an empty or long body)
    #[arg(long)]
    pub strict: bool,
}

pub fn run(args: LintArgs) -> anyhow::Result<u8> {
    let report = lint::lint_path(&args.skills_dir)?;
    for finding in &report.findings {
        crate::outln!("{finding}");
    }
    let (errors, warnings) = (report.errors(), report.warnings());
    crate::outln!(
        "lint: {} skill{}, {errors} error{}, {warnings} warning{}",
        report.skills,
        plural(report.skills),
        plural(errors),
        plural(warnings)
    );
    let failed = errors > 0 || (args.strict && warnings > 0);
    Ok(u8::from(failed))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
