//! How a sequential run spends its error budget over the planned repeats (`run --spending`):
//! the choice its manifest records and its summary reports. The share each look spends is
//! computed by `stats::sequential::budget_spent`.

use serde::{Deserialize, Serialize};

/// How the error budget is spent over the planned repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spending {
    /// α·ln(1 + (e − 1)·t): about even looks, so strong effects stop early.
    Pocock,
    /// 2 − 2Φ(z_{α/2} / √t): almost nothing early, nearly all of α at the last look.
    #[serde(rename = "obrien_fleming")]
    OBrienFleming,
    /// α·t² (Kim and DeMets' power family, ρ = 2): between the two.
    Quadratic,
}

impl Spending {
    /// What a sequential run spends by, chosen by simulation (decision 019): O'Brien–Fleming's
    /// power on every shape, and strong effects stop a repeat sooner.
    pub const DEFAULT: Spending = Spending::Quadratic;

    /// How a report names it.
    pub fn describe(self) -> &'static str {
        match self {
            Spending::Pocock => "Pocock's α·ln(1 + (e − 1)·t)",
            Spending::Quadratic => "α·t², t the share of the planned repeats run",
            Spending::OBrienFleming => "O'Brien–Fleming's",
        }
    }
}
