//! `skilleval report`: rebuilds a past run's `report.md` and `report.html` from its journal and
//! manifest, and writes JUnit XML on request; with `--rejudge`, judges the run's transcripts
//! again with the pack's current laws into a new run folder.

use std::path::PathBuf;

use clap::Args;

use crate::eval::record;
use crate::eval::report::{files, junit};
use crate::eval::run_summary;

pub const EXAMPLES: &str = "Examples:
  skilleval report 20261130-101500-weather          # a run id under output/
  skilleval report output/20261130-101500-weather --junit results.xml
  skilleval report 20261130-101500-weather --rejudge   # after editing the pack's laws";

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The run: its folder, or its id under --output
    pub run: String,
    /// Where run folders are, for a run given by its id
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Also write JUnit XML here: one test case per category and per law of the wording
    /// comparison (and the total), failed when its verdict is `worse` or `mixed`
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Judge the run's transcripts again with the pack's laws as they are now, into a new run
    /// folder beside it; refused when more than the laws changed in pack.toml, or the corpus
    #[arg(long)]
    pub rejudge: bool,
    /// The pack to judge with (its name, folder or pack.toml); by default the pack.toml the run
    /// used, where its manifest recorded it
    #[arg(long, requires = "rejudge")]
    pub pack: Option<String>,
}

pub fn run(args: ReportArgs) -> anyhow::Result<u8> {
    if let Some(path) = &args.junit {
        super::args::check_output_file("--junit", path)?;
    }
    let dir = record::find(&args.run, &args.output)?;
    let mut record = record::load(&dir)?;
    if args.rejudge {
        // A run still running would be copied half into a permanent folder.
        crate::eval::record::folder::check_not_running(&dir)
            .map_err(|e| anyhow::anyhow!("--rejudge: {e}"))?;
        let pack = crate::eval::pack::source::of_run(&record.manifest, args.pack.as_deref())?;
        let output_root = dir.parent().unwrap_or(std::path::Path::new("."));
        record = crate::eval::rejudge::rejudge_run(&record, &pack, output_root)?;
    }
    let dir = record.dir.clone();
    let summary = run_summary::of_record(&record)?;
    files::write_reports(&record, &summary, &files::settings_of(&record))?;
    if let Some(path) = &args.junit {
        write_junit(path, &summary, &record.manifest.run_id)?;
    }
    crate::out!(
        "{}",
        crate::eval::report::gaps::terminal(
            &crate::eval::report::gaps::gap_calls(&record.entries),
            &record.dir,
            10
        )
    );
    for warning in
        crate::eval::report::pinned::warnings(&record.entries, &record.manifest.law_tools)
    {
        crate::outln!("{warning}");
    }
    match &record.manifest.rejudged {
        Some(rejudged) => {
            crate::outln!("{}", crate::eval::report::table(&summary));
            crate::outln!(
                "run {} judged again with {}'s laws (changed: {}): {} of {} units judged otherwise",
                rejudged.from,
                record.manifest.pack,
                rejudged
                    .laws
                    .as_ref()
                    .map(|l| l.describe())
                    .unwrap_or_else(|| "not named in that run's manifest".into()),
                rejudged.units_changed,
                record.entries.len()
            );
            crate::outln!("run {} → {}", record.manifest.run_id, dir.display());
        }
        None => crate::outln!(
            "{} and {} rebuilt in {}",
            record::folder::MARKDOWN_FILE,
            record::folder::HTML_FILE,
            dir.display()
        ),
    }
    if let Some(note) = &record.prompts_note {
        eprintln!("note: {note}");
    }
    let void = crate::eval::report::errors::all_errored(&record.entries);
    if let Some(line) = crate::eval::report::errors::fatal_line(&void, "the run") {
        anyhow::bail!("{line} (run {})", record.manifest.run_id);
    }
    Ok(0)
}

/// Writes the JUnit document of a summary, naming the file on failure.
pub fn write_junit(
    path: &std::path::Path,
    summary: &crate::eval::stats::Summary,
    run_id: &str,
) -> anyhow::Result<()> {
    std::fs::write(path, junit::junit(summary, run_id))
        .map_err(|e| anyhow::anyhow!("--junit {}: cannot write: {e}", path.display()))
}
