//! One error budget for every row of a comparison: Westfall and Young's step-down min-P over
//! joint sign flips of whole samples.
//!
//! A comparison's rows (its categories, the total, the laws, and each of them again on the share
//! of laws held) are all computed from the same per-sample differences, so they are strongly
//! dependent: a law row and the category it lives in move together. Holm treats them as if they
//! could fail independently, and paying for every row separately leaves each row a level no
//! category of 15 samples can reach. Flipping the sign of a sample's difference in *every* row at
//! once (swapping its two arms) keeps that dependence, so the smallest p over all rows has the
//! distribution it really has under no effect, and the family pays once for the rows that move
//! together. The step-down form (reject the smallest p against the whole family, the next against
//! the family without it, …) keeps the family-wise error rate at the level under the usual
//! subset-pivotality condition, and never rejects less than Holm would on the same p-values.

use super::method::Rng;

/// Joint sign flips drawn per comparison (the observed signs count as one of them).
pub const JOINT_FLIPS: usize = 10_000;

/// Tolerance for ties between float sums of the same terms in another order.
pub(crate) const TIE: f64 = 1e-9;

/// What the family says of each row.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyTest {
    /// Each row's own Monte-Carlo p over the flips, (hits + 1) / flips with the observed signs
    /// among them.
    pub raw: Vec<f64>,
    /// Step-down min-P adjusted p, monotone in the order of `raw`.
    pub adjusted: Vec<f64>,
    /// The largest raw p a row could have and still be rejected when it is the only effect:
    /// the `level`-quantile of the smallest p over all rows under the flips. 0 when no row can
    /// be rejected at all.
    pub critical: f64,
    /// The same for a row that did not move in this run (every difference 0, so its p is 1
    /// under every flip and it is absent from the smallest p): were it to move, it would join
    /// the family as one more test, taken as independent of the rest (the conservative side
    /// for rows that move together): the largest c with 1 − (1 − F(c))(1 − c) ≤ level, F the
    /// distribution of the smallest p of the other rows. With no other row moving, c = level.
    pub critical_for_a_still_row: f64,
}

/// Tests every row of one family at once. `rows[r][s]` is row r's difference for sample s (0
/// where the row does not hold that sample, which then weighs nothing in it); every row has the
/// same samples' columns. `level` is the family's error rate.
pub fn step_down_min_p(rows: &[Vec<f64>], flips: usize, level: f64, seed: u64) -> FamilyTest {
    let r_count = rows.len();
    if r_count == 0 {
        return FamilyTest {
            raw: Vec::new(),
            adjusted: Vec::new(),
            critical: 0.0,
            critical_for_a_still_row: level,
        };
    }
    let flips = flips.max(1);
    let p = flip_p_values(rows, flips, seed);
    let raw: Vec<f64> = p.iter().map(|row| row[0]).collect();

    // Rows from the smallest raw p up; successive minima from the bottom of that order.
    let mut order: Vec<usize> = (0..r_count).collect();
    order.sort_by(|&a, &b| raw[a].total_cmp(&raw[b]).then(a.cmp(&b)));
    let mut running_min = vec![f64::INFINITY; flips];
    let mut hits = vec![0usize; r_count];
    for (position, &row) in order.iter().enumerate().rev() {
        for (b, slot) in running_min.iter_mut().enumerate() {
            *slot = slot.min(p[row][b]);
        }
        hits[position] = running_min.iter().filter(|&&m| m <= raw[row] + TIE).count();
    }
    let mut adjusted = vec![1.0; r_count];
    let mut carried = 0.0f64;
    for (position, &row) in order.iter().enumerate() {
        carried = carried.max(hits[position] as f64 / flips as f64);
        adjusted[row] = carried.min(1.0);
    }

    // After the loop `running_min` holds the smallest p over every row, per flip.
    let mut smallest = running_min;
    smallest.sort_by(f64::total_cmp);
    let allowed = (level * flips as f64).floor() as usize;
    let mut critical = 0.0;
    let mut next = 0;
    while next < smallest.len() {
        let value = smallest[next];
        let count = smallest.partition_point(|&x| x <= value + TIE);
        if count > allowed {
            break;
        }
        critical = value;
        next = count;
    }
    // Between neighbouring values of the smallest p, F is constant at i / flips.
    let mut critical_for_a_still_row = 0.0f64;
    let mut below = 0usize;
    let mut start = 0.0f64;
    loop {
        let end = smallest.get(below).copied().unwrap_or(1.0);
        let f = below as f64 / flips as f64;
        if f > level {
            break;
        }
        let best = (1.0 - (1.0 - level) / (1.0 - f)).min(end);
        if best >= start {
            critical_for_a_still_row = critical_for_a_still_row.max(best);
        }
        if below >= smallest.len() {
            break;
        }
        start = end;
        below = smallest.partition_point(|&x| x <= end + TIE);
    }
    FamilyTest {
        raw,
        adjusted,
        critical,
        critical_for_a_still_row,
    }
}

/// `p[r][b]`: the share of `flips` joint sign flips whose statistic |Σ_s ε_s d_rs| in row r is
/// at least flip b's; flip 0 is the observed one. The flips depend only on `seed` and the
/// number of samples, so rows of the same samples get the same flips at every call.
pub fn flip_p_values(rows: &[Vec<f64>], flips: usize, seed: u64) -> Vec<Vec<f64>> {
    let samples = rows.first().map_or(0, Vec::len);
    assert!(
        rows.iter().all(|r| r.len() == samples),
        "one column per sample"
    );
    let flips = flips.max(1);
    let mut stats = vec![vec![0.0f64; flips]; rows.len()];
    let mut rng = Rng::new(seed);
    let mut signs = vec![1.0f64; samples];
    for b in 0..flips {
        if b > 0 {
            for sign in signs.iter_mut() {
                *sign = if rng.next_u64() & 1 == 1 { 1.0 } else { -1.0 };
            }
        }
        for (row, out) in rows.iter().zip(stats.iter_mut()) {
            let sum: f64 = row.iter().zip(&signs).map(|(d, s)| d * s).sum();
            out[b] = sum.abs();
        }
    }
    stats
        .iter()
        .map(|row| {
            let mut sorted = row.clone();
            sorted.sort_by(f64::total_cmp);
            row.iter()
                .map(|&t| {
                    let below = sorted.partition_point(|&x| x < t - TIE);
                    (flips - below) as f64 / flips as f64
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_gives_its_own_sign_flip_p() {
        // Ten differences all of one sign: the exact two-sided p is 2/1024 ≈ 0.00195.
        let rows = vec![vec![0.5; 10]];
        let test = step_down_min_p(&rows, 20_000, 0.05, 1);
        assert!(
            (test.raw[0] - 2.0 / 1024.0).abs() < 0.0015,
            "{:?}",
            test.raw
        );
        assert_eq!(test.raw, test.adjusted);
    }

    #[test]
    fn identical_rows_cost_nothing_and_independent_ones_cost_like_bonferroni() {
        let mut rng = Rng::new(7);
        // Thirteen of fourteen differences positive: a p of a few in a thousand.
        let base: Vec<f64> = (0..14)
            .map(|i| if i < 13 { 1.0 } else { -1.0 } * (rng.unit() + 0.1))
            .collect();
        let one = step_down_min_p(std::slice::from_ref(&base), JOINT_FLIPS, 0.05, 3);
        let copies = step_down_min_p(
            &[base.clone(), base.clone(), base.clone()],
            JOINT_FLIPS,
            0.05,
            3,
        );
        // The same row three times is one test: its adjusted p is its raw p.
        assert!(
            (copies.adjusted[0] - one.raw[0]).abs() < 1e-12,
            "{copies:?} {one:?}"
        );
        // Three rows on disjoint samples are independent: the smallest pays about three times.
        let n = base.len();
        let mut disjoint = vec![vec![0.0; 3 * n]; 3];
        for (r, row) in disjoint.iter_mut().enumerate() {
            row[r * n..(r + 1) * n].copy_from_slice(&base);
        }
        let spread = step_down_min_p(&disjoint, JOINT_FLIPS, 0.05, 3);
        let ratio = spread.adjusted[0] / spread.raw[0];
        assert!((2.3..=3.1).contains(&ratio), "ratio {ratio}: {spread:?}");
    }

    #[test]
    fn the_critical_value_holds_the_family_at_its_level() {
        let rows: Vec<Vec<f64>> = (0..5)
            .map(|r| {
                (0..15)
                    .map(|s| if (s + r) % 3 == 0 { 0.0 } else { 1.0 / 3.0 })
                    .collect()
            })
            .collect();
        let test = step_down_min_p(&rows, JOINT_FLIPS, 0.05, 9);
        assert!(test.critical > 0.0 && test.critical <= 0.05, "{test:?}");
        assert!(test.critical_for_a_still_row <= test.critical + 1e-12);
        // A family where nothing moved: a row that moves would be the only test.
        let still = step_down_min_p(&vec![vec![0.0; 15]; 3], 2_000, 0.05, 9);
        assert_eq!(still.critical, 0.0);
        assert!((still.critical_for_a_still_row - 0.05).abs() < 1e-12);
        assert_eq!(still.adjusted, vec![1.0; 3]);
    }
}
