//! A sequential run's record in its manifest: the planned repeats, the spending, every look
//! taken with the rows it left open, and why the run stopped. `report` and `--resume` read the
//! verdicts back from it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::eval::spending::Spending;

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
    pub fn new(
        planned_repeats: u32,
        spending: Spending,
        budget: Option<Duration>,
    ) -> SequentialRecord {
        SequentialRecord {
            planned_repeats,
            spending,
            budget_secs: budget.map(|b| b.as_secs_f64()),
            looks: Vec::new(),
            stopped: None,
        }
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
