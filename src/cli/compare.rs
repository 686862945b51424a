//! `skilleval compare`: two runs of the same pack side by side, paired by sample and repeat.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::eval::arm::Arm;
use crate::eval::record;
use crate::eval::report::{compare, errors};

pub const EXAMPLES: &str = "Examples:
  skilleval compare 20261130-101500-weather 20261201-090000-weather   # run ids under output/
  skilleval compare runs/before runs/after --arm baseline --json";

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CompareArm {
    /// The skill with its body removed
    Control,
    /// The pack's own skill
    Baseline,
    /// The variant laid over it
    Variant,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The run compared against (A): its folder, or its id under --output
    pub run_a: String,
    /// The run compared (B): its folder, or its id under --output
    pub run_b: String,
    /// The arm compared in both runs (default: variant when both runs had one, else baseline)
    #[arg(long)]
    pub arm: Option<CompareArm>,
    /// Where run folders are, for runs given by their ids
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Print the comparison as JSON on stdout
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: CompareArgs) -> anyhow::Result<u8> {
    let a = record::load(&record::find(&args.run_a, &args.output)?)?;
    let b = record::load(&record::find(&args.run_b, &args.output)?)?;
    let arm = args.arm.map(|arm| match arm {
        CompareArm::Control => Arm::Control,
        CompareArm::Baseline => Arm::Baseline,
        CompareArm::Variant => Arm::Variant(0),
    });
    let result = compare::compare_runs(&a, &b, arm)?;
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        crate::out!("{}", compare::render(&result));
    }
    for record in [&a, &b] {
        let compared: Vec<_> = record
            .entries
            .iter()
            .filter(|e| e.arm == result.arm)
            .cloned()
            .collect();
        let void = errors::all_errored(&compared);
        if let Some(line) = errors::fatal_line(&void, "the comparison") {
            anyhow::bail!("{line} (run {})", record.manifest.run_id);
        }
    }
    Ok(0)
}
