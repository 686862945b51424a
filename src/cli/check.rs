//! `skilleval check`: a pack's laws against its hand-labelled cases, and every corpus sample
//! proved passable.

use clap::Args;

use crate::eval::law_cases;
use crate::eval::pack::Pack;
use crate::eval::replay::RecordMode;

pub const EXAMPLES: &str = "Examples:
  skilleval check --pack weather
  skilleval check --pack path/to/my-pack     # a pack folder holding pack.toml and judge-cases.jsonl
  skilleval check --pack path/to/my-pack --record   # record the reference calls no fixture answers";

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Pack name (packs/NAME) or path
    #[arg(long)]
    pub pack: String,
    /// Ask the pack's live tools (command, mcp, weather_lookup) for the reference calls and case
    /// calls no recording answers, and keep their answers as fixtures
    #[arg(long)]
    pub record: bool,
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let mode = if args.record {
        RecordMode::Gaps
    } else {
        RecordMode::Off
    };
    let report = law_cases::check_recording(&Pack::load(&args.pack)?, mode)?;
    print!("{}", report.render());
    Ok(if report.agrees() { 0 } else { 1 })
}
