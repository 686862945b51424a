//! `skilleval plan`: the checks a skill change needs, from a git diff and the repository's
//! packs, each with its provenance; the skills no pack measures and the refused gates.

use std::path::PathBuf;

use clap::Args;

use crate::eval::gate;

pub const EXAMPLES: &str = "Examples:
  skilleval plan                      # against the merge base with the default branch
  skilleval plan --base origin/main   # against a revision you name
  skilleval plan --strict --json      # exit 1 when a changed skill is not covered; JSON for CI";

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The revision to compare with (default: the merge base of HEAD and the default branch)
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// A folder inside the repository
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Exit 1 when a changed skill the model reads is measured by no pack
    #[arg(long)]
    pub strict: bool,
    /// Print the plan as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PlanArgs) -> anyhow::Result<u8> {
    let plan = gate::plan(&gate::Options {
        dir: args.repo,
        base: args.base,
    })?;
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        crate::out!("{}", plan.render_text());
    }
    Ok(plan.exit_code(args.strict))
}
