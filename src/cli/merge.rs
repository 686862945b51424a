//! `skilleval merge`: the shard runs of one split run (`run --shard I/N` on several machines)
//! put together into one run folder, its table on stdout.

use std::path::PathBuf;

use clap::Args;

use crate::eval::merge::{self, MergeOptions};
use crate::eval::report;

pub const EXAMPLES: &str = "Examples:
  skilleval merge output/20261201-090000-weather output/20261201-090002-weather output/20261201-090005-weather
  skilleval merge shards/*/ --output output --json > summary.json";

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The run folders of every shard of one run (`run --shard I/N`), in any order
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where the merged run folder goes
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: MergeArgs) -> anyhow::Result<u8> {
    let result = merge::merge(&MergeOptions {
        dirs: args.dirs,
        output_root: args.output,
    })?;
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&result.summary)?);
    } else {
        crate::outln!("{}", report::table(&result.summary));
        crate::outln!("run {} → {}", result.run_id, result.dir.display());
    }
    Ok(0)
}
