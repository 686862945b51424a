//! `skilleval check`: a pack's laws against its hand-labelled cases, and every corpus sample
//! proved passable.

use clap::Args;

use crate::eval::law_cases;
use crate::eval::pack::Pack;

pub const EXAMPLES: &str = "Examples:
  skilleval check --pack weather
  skilleval check --pack path/to/my-pack     # a pack folder holding pack.toml and judge-cases.jsonl";

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Pack name (packs/NAME) or path
    #[arg(long)]
    pub pack: String,
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let report = law_cases::check(&Pack::load(&args.pack)?)?;
    print!("{}", report.render());
    Ok(if report.agrees() { 0 } else { 1 })
}
