//! `skilleval fixtures RUN`: a stub fixture for every call of a run that no recording answered,
//! in the tool's folder and shape, to fill in by hand or to record over with `--record gaps`.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;
use serde_json::{Map, Value};

use crate::eval::fixture_store::{Fixture, FixtureStore};
use crate::eval::record;
use crate::eval::report::gaps::gap_calls;

pub const EXAMPLES: &str = "Examples:
  skilleval fixtures 20261202-212432-timetable
  skilleval fixtures output/20261202-212432-timetable --pack path/to/my-pack --dry-run";

#[derive(Args, Debug)]
pub struct FixturesArgs {
    /// The run: its id under --output, or its folder
    pub run: String,
    /// The pack whose fixture folders get the stubs (default: the pack.toml the run used, where
    /// its manifest recorded it)
    #[arg(long)]
    pub pack: Option<String>,
    /// List the stubs without writing them
    #[arg(long)]
    pub dry_run: bool,
    /// Where run folders are
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
}

pub fn run(args: FixturesArgs) -> anyhow::Result<u8> {
    let dir = record::find(&args.run, &args.output)?;
    let record = record::load(&dir)?;
    let pack = crate::eval::pack::source::of_run(&record.manifest, args.pack.as_deref())?;
    let gaps = gap_calls(&record.entries);
    if gaps.is_empty() {
        crate::outln!(
            "run {}: every call was answered; no stub to write",
            record.manifest.run_id
        );
        return Ok(0);
    }
    if !args.dry_run {
        for route in pack.routes() {
            crate::eval::pack::source::refuse_write_into_shipped(&route.dir, "fixtures")?;
        }
    }
    // Only the routes: a stub is written beside the recordings, never over one.
    let store = FixtureStore::load_to_record(pack.routes())?;
    let (mut written, mut kept) = (0, 0);
    for gap in &gaps {
        let arguments: Map<String, Value> = gap.arguments.as_object().cloned().unwrap_or_default();
        if store.route(&gap.tool).is_none() {
            crate::outln!(
                "skip {} {}: the pack has no fixtures folder for this tool",
                gap.tool,
                gap.arguments
            );
            continue;
        }
        if let Some((path, _)) = store.lookup_any(&gap.tool, &arguments, &gap.after) {
            crate::outln!(
                "keep {} (already answers or stubs {} {})",
                path.display(),
                gap.tool,
                gap.arguments
            );
            kept += 1;
            continue;
        }
        let stub = Fixture {
            tool: gap.tool.clone(),
            arguments,
            note: Some(format!(
                "written by skilleval fixtures from run {}: fill in body and status, then delete \"stub\"",
                record.manifest.run_id
            )),
            stub: true,
            status: 200,
            body: Value::String(String::new()),
            after: gap.after.clone(),
            ..Default::default()
        };
        if args.dry_run {
            crate::outln!("would write a stub for {} {}", gap.tool, gap.arguments);
        } else {
            match store
                .record(stub)
                .map_err(|e| anyhow!("{}: {e}", dir.display()))?
            {
                crate::eval::fixture_store::Recorded::Written(path) => {
                    crate::outln!("wrote {}", path.display())
                }
                crate::eval::fixture_store::Recorded::Kept { path, .. }
                | crate::eval::fixture_store::Recorded::EarlierInRun { path, .. } => {
                    crate::outln!(
                        "keep {} (answers {} {})",
                        path.display(),
                        gap.tool,
                        gap.arguments
                    );
                    kept += 1;
                    continue;
                }
            }
        }
        written += 1;
    }
    crate::outln!(
        "{written} stub(s) {}, {kept} call(s) already have a file",
        if args.dry_run { "to write" } else { "written" }
    );
    Ok(0)
}
