//! Verdicts under repeated looks. A sequential run goes in waves (one repeat of every sample in
//! every arm) and looks at its evidence after each; a row is called as soon as it crosses its
//! look's boundary, and the run stops once every row is called or has no realistic chance of
//! being called by the last planned repeat.
//!
//! **The test** is the fixed design's step-down min-P over joint sign flips of whole samples
//! ([`super::family`]), looked at after every wave. The flips are the same at every look (they
//! swap a sample's two arms in all its repeats), so each flip gives a whole path of smallest p's,
//! one per look, and the boundaries come from those paths: at look j the boundary is the largest
//! value that at most the error budget spent by then, `spent[j]`, of the flips has crossed at
//! this look or an earlier one (Lan and DeMets' α-spending, over the permutation distribution
//! instead of a normal one). Looking more often cannot raise the error rate: the flips that
//! crossed at any look are counted once, against the budget of the latest. The step-down
//! recomputes every look's boundary for the rows still open, as the closed test asks.
//!
//! **Spending** is planned by repeats: look j after r_j of R planned repeats has information
//! fraction r_j / R. A run stopped early (settled, or out of its `--budget`) leaves the rest
//! unspent, which keeps the error rate on the safe side.
//!
//! **Futility** ([`conditional_power`]) decides nothing about verdicts: it only lets the run stop
//! when no open row is likely to be called by the last planned repeat, so it cannot raise the
//! error rate (a non-binding rule); what it costs in power is measured (tests/sequential_design.rs).

use serde::{Deserialize, Serialize};

use super::family::{flip_p_values, TIE};
use crate::eval::spending::Spending;

/// A row whose chance of a verdict by the last planned repeat is below this is settled as no
/// change, and no longer keeps the run going.
pub const FUTILITY: f64 = 0.30;

/// The share of `level` spent by information fraction `t` (clipped to [0, 1]).
pub fn budget_spent(spending: Spending, level: f64, t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    if t <= 0.0 {
        return 0.0;
    }
    if t >= 1.0 {
        return level;
    }
    match spending {
        Spending::Pocock => level * (1.0 + (std::f64::consts::E - 1.0) * t).ln(),
        Spending::Quadratic => level * t * t,
        Spending::OBrienFleming => {
            let z = normal_quantile(1.0 - level / 2.0);
            (2.0 * (1.0 - normal_cdf(z / t.sqrt()))).min(level)
        }
    }
}

/// The looks of a sequential run: how many repeats each had seen (the last is the look being
/// made), out of how many planned, and how the error budget is spent over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Looks {
    pub planned: u32,
    pub at: Vec<u32>,
    pub spending: Spending,
}

impl Looks {
    /// The error budget spent by each look, of a family at `level`.
    pub fn spent(&self, level: f64) -> Vec<f64> {
        let planned = f64::from(self.planned.max(1));
        self.at
            .iter()
            .map(|&r| budget_spent(self.spending, level, f64::from(r) / planned))
            .collect()
    }
}

/// Which rows the group-sequential step-down has called by the last of `looks`. `looks[j][r][s]`
/// is row r's difference for sample s with the repeats of look j (every look has the same rows
/// and samples in the same order); `spent[j]` is the error budget spent by look j. Also gives
/// the boundary on the smallest p of the whole family at the last look, the level a row needs
/// when it is the only effect.
pub fn step_down(
    looks: &[Vec<Vec<f64>>],
    spent: &[f64],
    flips: usize,
    seed: u64,
) -> (Vec<bool>, f64) {
    assert_eq!(looks.len(), spent.len(), "one budget per look");
    let rows = looks.first().map_or(0, Vec::len);
    if rows == 0 {
        return (Vec::new(), 0.0);
    }
    let flips = flips.max(1);
    // p[j][r][b], the same flips b at every look.
    let p: Vec<Vec<Vec<f64>>> = looks
        .iter()
        .map(|m| flip_p_values(m, flips, seed))
        .collect();
    let mut open: Vec<usize> = (0..rows).collect();
    let mut called = vec![false; rows];
    let whole_family = boundaries(&p, &open, spent, flips);
    let last_level = whole_family.last().copied().unwrap_or(0.0).max(0.0);
    let mut bounds = whole_family;
    loop {
        // The earliest look at which an open row crossed; the smallest p there.
        let hit = (0..looks.len()).find_map(|j| {
            open.iter()
                .copied()
                .filter(|&r| p[j][r][0] <= bounds[j] + TIE)
                .min_by(|&a, &b| p[j][a][0].total_cmp(&p[j][b][0]).then(a.cmp(&b)))
        });
        let Some(row) = hit else { break };
        called[row] = true;
        open.retain(|&r| r != row);
        if open.is_empty() {
            break;
        }
        bounds = boundaries(&p, &open, spent, flips);
    }
    (called, last_level)
}

/// Each look's boundary on the smallest p over the `open` rows: the largest value such that the
/// flips that crossed by then number fewer than `spent[j]` of all flips (so that with one look
/// and the whole budget it is the fixed design's test). −1 where no value is allowed.
fn boundaries(p: &[Vec<Vec<f64>>], open: &[usize], spent: &[f64], flips: usize) -> Vec<f64> {
    let mut crossed = vec![false; flips];
    let mut count = 0usize;
    let mut bounds = Vec::with_capacity(p.len());
    for (look, &budget) in p.iter().zip(spent) {
        let smallest: Vec<f64> = (0..flips)
            .map(|b| {
                open.iter()
                    .map(|&r| look[r][b])
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let allowed = ((budget * flips as f64).ceil() as usize).saturating_sub(1);
        let mut fresh: Vec<f64> = (0..flips)
            .filter(|&b| !crossed[b])
            .map(|b| smallest[b])
            .collect();
        fresh.sort_by(f64::total_cmp);
        let mut bound = -1.0;
        let mut next = 0;
        while next < fresh.len() {
            let value = fresh[next];
            let through = fresh.partition_point(|&x| x <= value + TIE);
            if count + through > allowed {
                break;
            }
            bound = value;
            next = through;
        }
        for (b, slot) in crossed.iter_mut().enumerate() {
            if !*slot && smallest[b] <= bound + TIE {
                *slot = true;
                count += 1;
            }
        }
        bounds.push(bound);
    }
    bounds
}

/// What a row's conditional power rests on: its Δ so far, its samples, the spread of samples'
/// true differences (τ²) and the repeat-to-repeat noise of one run's difference (σ²_w).
#[derive(Debug, Clone, Copy)]
pub struct RowSoFar {
    pub delta: f64,
    pub samples: usize,
    pub between_samples: f64,
    pub between_repeats: Option<f64>,
}

/// The chance that the row is called by the last planned repeat if its true Δ is the one seen so
/// far, at a two-sided `level`: the standard Brownian-motion projection of the row's z over its
/// information, n / (τ² + σ²_w / r) with r repeats. 1 when it cannot be told (σ²_w unknown after
/// one repeat): an unknown row keeps the run going.
pub fn conditional_power(row: RowSoFar, now: u32, planned: u32, level: f64) -> f64 {
    let Some(noise) = row.between_repeats else {
        return 1.0;
    };
    if row.samples == 0 || level <= 0.0 {
        return 0.0;
    }
    let n = row.samples as f64;
    let information = |r: u32| {
        let variance = row.between_samples.max(0.0) + noise.max(0.0) / f64::from(r.max(1));
        if variance <= 0.0 {
            f64::INFINITY
        } else {
            n / variance
        }
    };
    let (now_info, last_info) = (information(now), information(planned.max(now)));
    let z_needed = normal_quantile(1.0 - level / 2.0);
    if !now_info.is_finite() || !last_info.is_finite() || last_info - now_info <= 1e-12 {
        let z_now = row.delta * now_info.min(1e12).sqrt();
        return f64::from(u8::from(z_now.abs() >= z_needed));
    }
    // B-values: S = Z√I moves as Brownian motion with drift Δ in information.
    let s_now = row.delta * now_info;
    let gained = last_info - now_info;
    let mean = s_now + row.delta * gained;
    let spread = gained.sqrt();
    let edge = z_needed * last_info.sqrt();
    normal_cdf((mean - edge) / spread) + normal_cdf((-edge - mean) / spread)
}

/// Φ, by the complementary error function (Numerical Recipes' erfc, relative error < 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z);
    let erfc = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// Φ⁻¹ (Acklam's rational approximation, relative error < 1.2e-9), for p in (0, 1).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let low = 0.024_25;
    if p < low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -normal_quantile(1.0 - p)
    }
}

#[cfg(test)]
mod tests {
    use super::super::family::step_down_min_p;
    use super::super::method::Rng;
    use super::*;

    #[test]
    fn the_normal_functions_match_known_values() {
        // Truth: standard tables.
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((normal_quantile(0.001) + 3.090_232).abs() < 1e-5);
    }

    #[test]
    fn every_spending_function_spends_the_whole_budget_by_the_last_look_in_its_own_order() {
        let all = [
            Spending::Pocock,
            Spending::Quadratic,
            Spending::OBrienFleming,
        ];
        for spending in all {
            assert!((budget_spent(spending, 0.05, 1.0) - 0.05).abs() < 1e-9);
            assert_eq!(budget_spent(spending, 0.05, 0.0), 0.0);
        }
        // Truth: the closed forms at half the information, by hand.
        let half = |s: Spending| budget_spent(s, 0.05, 0.5);
        assert!(half(Spending::Pocock) > 0.03);
        assert!((half(Spending::Quadratic) - 0.0125).abs() < 1e-12);
        assert!(half(Spending::OBrienFleming) < 0.006);
    }

    fn random_rows(rng: &mut Rng, rows: usize, samples: usize, shift: f64) -> Vec<Vec<f64>> {
        (0..rows)
            .map(|r| {
                (0..samples)
                    .map(|_| {
                        let d = (rng.below(3) as f64 - 1.0) / 2.0;
                        if r == 0 {
                            d + shift
                        } else {
                            d
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn one_look_with_the_whole_budget_is_the_fixed_step_down() {
        // A change detector against the fixed design's own test, on random families.
        let mut rng = Rng::new(5);
        for trial in 0..30 {
            let rows = random_rows(&mut rng, 4, 15, 0.1 * (trial % 5) as f64);
            let fixed = step_down_min_p(&rows, 2_000, 0.05, 11);
            let (called, _) = step_down(std::slice::from_ref(&rows), &[0.05], 2_000, 11);
            let expected: Vec<bool> = fixed.adjusted.iter().map(|&a| a < 0.05).collect();
            assert_eq!(called, expected, "trial {trial}: {fixed:?}");
        }
    }

    #[test]
    fn under_no_effect_repeated_looks_keep_the_error_rate() {
        // Truth by simulation: differences symmetric around 0, looked at six times as repeats
        // accumulate; a false call anywhere in 400 families.
        let mut rng = Rng::new(17);
        let (mut false_calls, runs) = (0, 400);
        for run in 0..runs {
            let per_repeat: Vec<Vec<Vec<f64>>> =
                (0..6).map(|_| random_rows(&mut rng, 3, 12, 0.0)).collect();
            let looks: Vec<Vec<Vec<f64>>> = (1..=6)
                .map(|k| {
                    (0..3)
                        .map(|r| {
                            (0..12)
                                .map(|s| {
                                    per_repeat[..k].iter().map(|m| m[r][s]).sum::<f64>() / k as f64
                                })
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let design = Looks {
                planned: 6,
                at: (1..=6).collect(),
                spending: Spending::Pocock,
            };
            let (called, _) = step_down(&looks, &design.spent(0.05), 1_000, run as u64);
            false_calls += usize::from(called.iter().any(|&c| c));
        }
        // 5% of 400 is 20; binomial sd ≈ 4.4.
        assert!(false_calls <= 32, "{false_calls} of {runs}");
    }

    #[test]
    fn conditional_power_is_low_for_nothing_and_high_for_a_clear_change() {
        let row = |delta| RowSoFar {
            delta,
            samples: 40,
            between_samples: 0.02,
            between_repeats: Some(0.3),
        };
        assert!(conditional_power(row(0.0), 3, 6, 0.01) < FUTILITY);
        assert!(conditional_power(row(0.3), 3, 6, 0.01) > 0.9);
        let unknown = RowSoFar {
            between_repeats: None,
            ..row(0.0)
        };
        assert_eq!(conditional_power(unknown, 1, 6, 0.01), 1.0);
    }
}
