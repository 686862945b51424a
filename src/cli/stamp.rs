//! `skilleval stamp`: writes a run's per-category scores into the winning wording's front
//! matter, with a bumped `version:`.

use std::path::PathBuf;

use clap::Args;

use crate::eval::record;
use crate::eval::run_summary;
use crate::eval::stamp;

pub const EXAMPLES: &str = "Examples:
  skilleval stamp 20261201-090000-weather                 # a variant with a row better, none worse
  skilleval stamp 20261201-090000-weather --variant packs/weather/variants/c.md
  skilleval stamp 20261201-090000-flights --into my-skills/flight-status/SKILL.md --dry-run";

#[derive(Args, Debug)]
pub struct StampArgs {
    /// The run: its folder, or its id under --output
    pub run: String,
    /// Stamp this wording of the run (a variant file, or the baseline's SKILL.md) instead of the
    /// one with the highest total pass rate among those no row of which got worse
    #[arg(long)]
    pub variant: Option<PathBuf>,
    /// Where run folders are, for a run given by its id
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Print the stamped file on stdout and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Stamp this copy of the winning wording instead of the run's own file (its body must be
    /// the one the run measured): for a run of a shipped pack, whose files are the binary's
    #[arg(long, value_name = "FILE")]
    pub into: Option<PathBuf>,
}

pub fn run(args: StampArgs) -> anyhow::Result<u8> {
    let record = record::load(&record::find(&args.run, &args.output)?)?;
    let summary = run_summary::of_record(&record)?;
    let mut winner = stamp::winner(&record, &summary, args.variant.as_deref())?;
    if winner.declined.is_empty() {
        for (file, rows) in stamp::passed_over(&record, &summary) {
            eprintln!(
                "stamp: passed over {file}: run {} calls it worse in {}",
                record.manifest.run_id,
                rows.join(", ")
            );
        }
    } else {
        eprintln!(
            "stamp: {} is stamped because you named it, though run {} calls it worse in {}",
            winner.file.display(),
            record.manifest.run_id,
            winner.declined.join(", ")
        );
    }
    if args.variant.is_none() && winner.arm == crate::eval::arm::Arm::Baseline {
        eprintln!(
            "stamp: no variant of run {} has a row better beyond noise and none worse, so the baseline keeps its place",
            record.manifest.run_id
        );
    }
    if let Some(copy) = &args.into {
        winner.file = copy.clone();
    }
    if !args.dry_run {
        crate::eval::pack::source::refuse_write_into_shipped(&winner.file, "stamp")
            .map_err(|e| anyhow::anyhow!("{e:#}; or stamp a copy of the file with --into FILE"))?;
    }
    let stamped = stamp::stamp(&record, &summary, winner)?;
    if args.dry_run {
        eprintln!(
            "stamp: --dry-run: this is what {} would become; nothing was written",
            stamped.winner.file.display()
        );
        crate::out!("{}", stamped.text);
        return Ok(0);
    }
    let file = &stamped.winner.file;
    std::fs::write(file, &stamped.text)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", file.display()))?;
    let (old, new) = &stamped.version;
    crate::outln!(
        "stamped {} ({}, total {}) with run {}: version {} → {new}",
        file.display(),
        stamped.winner.arm.name(),
        stamped
            .winner
            .rate
            .map_or("—".to_string(), |r| format!("{:.1}%", r * 100.0)),
        record.manifest.run_id,
        old.as_deref().unwrap_or("(none)")
    );
    Ok(0)
}
