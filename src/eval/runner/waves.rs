//! A sequential run (`run --sequential`): the plan in waves, one repeat of every sample in every
//! arm, with a look at the evidence after each ([`stats::sequential`]). The run stops when no row
//! of any wording is open (each called, or with no realistic chance of a verdict by the last
//! planned repeat), at the planned repeats, or when the next wave would not end within its
//! `--budget`. Every look and its decision go into the manifest, so that `report` rebuilds the
//! same verdicts and `--resume` goes on to the same decisions.

use std::time::{Duration, Instant};

use super::execute::{execute, plan_units, selected};
use super::prepare::Prepared;
use crate::eval::plan::Unit;
use crate::eval::record::folder::MANIFEST_FILE;
use crate::eval::record::{manifest, Journal, JournalEntry, Look, Manifest, RunFolder};
use crate::eval::record::{SequentialRecord, Stop};
use crate::eval::run_summary;
use crate::eval::stats::{Effort, StatsError, Summary};
use crate::exec::profile::Profile;
use crate::harness::backend::Backend;

/// The rows of every wording comparison still open at a look after `repeats` repeats, given
/// the looks `manifest` records before it. A row of a further variant is named with its label.
pub fn open_rows(
    manifest: &Manifest,
    entries: &[JournalEntry],
    repeats: u32,
) -> Result<Vec<String>, StatsError> {
    let mut looking = manifest.clone();
    if let Some(record) = looking.sequential.as_mut() {
        record.looks.retain(|l| l.repeats < repeats);
        record.looks.push(Look {
            repeats,
            units: 0,
            open_rows: Vec::new(),
        });
    }
    // The verdicts and their chances do not depend on the MDE, the slow part.
    let effort = Effort {
        power: false,
        ..Effort::REPORT
    };
    let summary = run_summary::summary_at(&looking, entries, effort)?;
    Ok(named_open_rows(&summary))
}

fn named_open_rows(summary: &Summary) -> Vec<String> {
    let several = !summary.more_wordings.is_empty();
    summary
        .wordings()
        .flat_map(|w| {
            let label = w.label.clone().unwrap_or_else(|| w.name.clone());
            w.open_rows.iter().map(move |row| match several {
                true => format!("{label}: {row}"),
                false => row.clone(),
            })
        })
        .collect()
}

/// Parses `--budget`: seconds, or a number with `s`, `m` or `h`.
/// The longest `--budget`: a year, in seconds.
pub const BUDGET_MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

pub fn parse_budget(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => (&text[..at], c),
        _ => (text, 's'),
    };
    let scale = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        _ => {
            return Err(format!(
                "{text:?}: give seconds, or a number with s, m or h (e.g. 10m)"
            ))
        }
    };
    match number.trim().parse::<f64>() {
        // At most a year: a longer budget means none, and `Duration` (or an `Instant` plus
        // it) would overflow far above.
        Ok(n) if n > 0.0 && n.is_finite() && n * scale > BUDGET_MAX_SECONDS => Err(format!(
            "{text:?}: a budget of at most a year ({BUDGET_MAX_SECONDS} s); leave --budget out for none"
        )),
        Ok(n) if n > 0.0 && n.is_finite() => Duration::try_from_secs_f64(n * scale)
            .map_err(|e| format!("{text:?}: {e}")),
        _ => Err(format!(
            "{text:?}: give a time above 0, in seconds or with s, m or h (e.g. 10m)"
        )),
    }
}

/// A sequential run: each wave's units, then a look that decides whether the next one runs;
/// every look is written into the manifest as it is taken.
pub fn execute_in_waves(
    backend: &mut dyn Backend,
    run: &Prepared,
    folder: &RunFolder,
    manifest: &Manifest,
    record: &mut SequentialRecord,
    (journal, profile, entries): (&mut Journal, &mut Profile, &mut Vec<JournalEntry>),
) -> anyhow::Result<()> {
    let planned = run.opts.repeats;
    let budget = run.opts.sequential.and_then(|s| s.budget);
    let started = Instant::now();
    record.looks.clear();
    record.stopped = None;
    for wave in 0..planned {
        let wave_started = Instant::now();
        let units: Vec<Unit> = plan_units(run, entries)
            .into_iter()
            .filter(|u| u.repeat <= wave)
            .collect();
        execute(
            backend,
            run,
            &units,
            (&mut *journal, &mut *profile, &mut *entries),
        )?;
        let repeats = wave + 1;
        let mut looking = manifest.clone();
        looking.sequential = Some(record.clone());
        let open_rows = open_rows(&looking, &selected(run, entries), repeats)?;
        let units_seen = entries.iter().filter(|e| e.repeat < repeats).count();
        // Waves already journaled (a resume) take no time and say nothing of the next one.
        let wave_secs = if units.is_empty() {
            0.0
        } else {
            wave_started.elapsed().as_secs_f64()
        };
        let passes_budget =
            budget.is_some_and(|b| started.elapsed().as_secs_f64() + wave_secs > b.as_secs_f64());
        record.stopped = if open_rows.is_empty() {
            Some(Stop::Settled)
        } else if repeats == planned {
            Some(Stop::Planned)
        } else if passes_budget {
            Some(Stop::Budget)
        } else {
            None
        };
        if run.opts.progress {
            eprintln!(
                "look {repeats}/{planned} ({units_seen} units): {}",
                match open_rows.len() {
                    0 => "every row called or settled".to_string(),
                    1 => format!("1 row open ({})", open_rows[0]),
                    n => format!("{n} rows open ({})", open_rows.join(", ")),
                }
            );
        }
        record.looks.push(Look {
            repeats,
            units: units_seen,
            open_rows,
        });
        manifest::record_looks(&folder.file(MANIFEST_FILE), record)?;
        if record.stopped.is_some() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_as_a_person_writes_them() {
        assert_eq!(parse_budget("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_budget("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_budget("1.5h"), Ok(Duration::from_secs(5400)));
        assert!(parse_budget("0").is_err());
        assert!(parse_budget("10d").unwrap_err().contains("s, m or h"));
        assert!(parse_budget("soon").is_err());
    }
}
