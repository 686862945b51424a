//! A sequential run (`run --sequential`): the plan in waves, one repeat of every sample in every
//! arm, with a look at the evidence after each ([`stats::sequential`]). The run stops when no row
//! of any wording is open (each called, or with no realistic chance of a verdict by the last
//! planned repeat), at the planned repeats, or when the next wave would not end within its
//! `--budget`. Every look and its decision go into the manifest, so that `report` rebuilds the
//! same verdicts and `--resume` goes on to the same decisions.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::journal::JournalEntry;
use super::manifest::Manifest;
use super::report;
use super::stats::sequential::{Looks, Spending};
use super::stats::{Effort, StatsError, Summary};

/// What a sequential run asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sequential {
    pub spending: Spending,
    /// Start no wave that would not end within this much time from the first unit.
    pub budget: Option<Duration>,
}

/// The manifest's record of a sequential run: its plan and every look it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialRecord {
    pub planned_repeats: u32,
    pub spending: Spending,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_secs: Option<f64>,
    pub looks: Vec<Look>,
    /// Why the run stopped; absent while it goes on (or when it was interrupted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stop>,
}

/// One look: after how many repeats, over how many units, and the rows it left open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Look {
    pub repeats: u32,
    pub units: usize,
    pub open_rows: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every row of every wording called or settled.
    Settled,
    /// The planned repeats ran.
    Planned,
    /// The next wave would have ended after the budget.
    Budget,
}

impl SequentialRecord {
    pub fn new(planned_repeats: u32, sequential: Sequential) -> SequentialRecord {
        SequentialRecord {
            planned_repeats,
            spending: sequential.spending,
            budget_secs: sequential.budget.map(|b| b.as_secs_f64()),
            looks: Vec::new(),
            stopped: None,
        }
    }

    /// The looks taken, for the statistics; `None` before the first.
    pub fn looks(&self) -> Option<Looks> {
        (!self.looks.is_empty()).then(|| Looks {
            planned: self.planned_repeats,
            at: self.looks.iter().map(|l| l.repeats).collect(),
            spending: self.spending,
        })
    }

    /// "sequential: 5 of 6 repeats, every row called or settled": for the settings line.
    pub fn describe(&self) -> String {
        let done = self.looks.last().map_or(0, |l| l.repeats);
        let why = match self.stopped {
            Some(Stop::Settled) => "every row called or settled".to_string(),
            Some(Stop::Planned) => "the planned repeats ran".to_string(),
            Some(Stop::Budget) => format!(
                "the next wave would have passed the budget of {:.0}s",
                self.budget_secs.unwrap_or(0.0)
            ),
            None => "interrupted".to_string(),
        };
        format!(
            "sequential: {done} of {} repeats, {why}",
            self.planned_repeats
        )
    }
}

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
    let summary = report::run_folder::summary_at(&looking, entries, effort)?;
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
        Ok(n) if n > 0.0 && n.is_finite() => Ok(Duration::from_secs_f64(n * scale)),
        _ => Err(format!(
            "{text:?}: give a time above 0, in seconds or with s, m or h (e.g. 10m)"
        )),
    }
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
