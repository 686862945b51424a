//! The numerical parts of the method, free of outcomes and arms: a seeded random source, the
//! paired bootstrap and the sign-flip permutation test. The report's rows are adjusted by the
//! family's step-down min-P test (`family.rs`, decision 015); Holm's adjustment, which that test
//! replaced, stays here only for the test that recomputes the replaced method's verdicts
//! (tests/verdict_shapes.rs). The minimum detectable effect (simulated from the sign-flip test
//! itself, [`PowerModel`], or from Student's t) is in the child modules `power` and
//! `student_t`, re-exported here.
//!
//! Everything here is deterministic: a random step takes its seed from the caller.

mod power;
mod student_t;

pub use power::{detectable_effect, largest_variance_for, promised_power, PowerModel, POWER_DRAWS};
pub use student_t::{student_t_cdf, student_t_quantile};

/// SplitMix64: small, fast, and enough for resampling; the same seed gives the same stream on
/// every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by rejection so that no index is favoured.
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A stable seed for one named figure, so that a row's interval does not depend on which other
/// rows were computed before it.
pub fn seed_for(parts: &[&str]) -> u64 {
    // FNV-1a over the parts, separated so that ("ab", "c") and ("a", "bc") differ.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0x1f]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// A two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Percentile bootstrap interval for the mean of all values, resampling each stratum's values
/// with replacement within that stratum (one stratum: the plain paired bootstrap). The mean is
/// over all values, so each stratum weighs by its size, as in the point estimate. Resampling n
/// values from n understates the variance of their mean by (n − 1)/n, which matters with the
/// few samples a category may have; each stratum's resampled mean is therefore spread around its
/// own mean by √(n/(n − 1)) (Rao and Wu's rescaled bootstrap). Strata of a single value are
/// pooled into one, since one value has no spread to resample. `None` when there are no values.
pub fn bootstrap_mean_interval(
    strata: &[Vec<f64>],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<Interval> {
    let total: usize = strata.iter().map(Vec::len).sum();
    if total == 0 || resamples == 0 {
        return None;
    }
    let singletons: Vec<f64> = strata
        .iter()
        .filter(|s| s.len() == 1)
        .map(|s| s[0])
        .collect();
    let mut pooled: Vec<&[f64]> = strata
        .iter()
        .filter(|s| s.len() > 1)
        .map(Vec::as_slice)
        .collect();
    if !singletons.is_empty() {
        pooled.push(&singletons);
    }
    let mut rng = Rng::new(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let mut sum = 0.0;
            for stratum in &pooled {
                let n = stratum.len();
                let mean = stratum.iter().sum::<f64>() / n as f64;
                let drawn = (0..n).map(|_| stratum[rng.below(n)]).sum::<f64>() / n as f64;
                let spread = if n > 1 {
                    (n as f64 / (n as f64 - 1.0)).sqrt()
                } else {
                    0.0
                };
                sum += n as f64 * (mean + spread * (drawn - mean));
            }
            sum / total as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Some(Interval {
        low: quantile_sorted(&means, tail),
        high: quantile_sorted(&means, 1.0 - tail),
    })
}

/// Linear interpolation between order statistics (the common "type 7" definition).
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let weight = position - below as f64;
    sorted[below] * (1.0 - weight) + sorted[above] * weight
}

/// Largest table the exact permutation distribution may use before falling back to draws.
const EXACT_TABLE_LIMIT: usize = 4_000_000;
/// Draws of the Monte-Carlo fallback.
pub const MONTE_CARLO_DRAWS: usize = 100_000;

/// Two-sided p-value of the sign-flip permutation test of "the differences are symmetric
/// around 0": the chance, over all 2^n ways of flipping the signs, of a sum at least as far
/// from 0 as the observed one. Each difference is given as an integer over a common
/// denominator (`numerators`), so that ties are decided exactly. The distribution is computed
/// exactly by convolution; only when its table would exceed [`EXACT_TABLE_LIMIT`] entries is
/// it estimated from [`MONTE_CARLO_DRAWS`] seeded draws, as (1 + hits) / (1 + draws).
/// 1.0 when there is nothing to test.
pub fn sign_flip_p(numerators: &[i64], seed: u64) -> f64 {
    sign_flip(numerators, seed).0
}

/// [`sign_flip_p`], and whether it was computed exactly (else from seeded draws).
pub fn sign_flip(numerators: &[i64], seed: u64) -> (f64, bool) {
    let magnitudes: Vec<usize> = numerators
        .iter()
        .map(|k| k.unsigned_abs() as usize)
        .filter(|&k| k > 0)
        .collect();
    if magnitudes.is_empty() {
        return (1.0, true);
    }
    let observed: i64 = numerators.iter().sum();
    let observed = observed.unsigned_abs() as usize;
    if let Some(distribution) = SignFlipDistribution::exact(&magnitudes) {
        (distribution.tail(observed), true)
    } else {
        let mut rng = Rng::new(seed);
        let hits = (0..MONTE_CARLO_DRAWS)
            .filter(|_| {
                let sum: i64 = magnitudes
                    .iter()
                    .map(|&k| {
                        if rng.next_u64() & 1 == 1 {
                            k as i64
                        } else {
                            -(k as i64)
                        }
                    })
                    .sum();
                sum.unsigned_abs() as usize >= observed
            })
            .count();
        ((1 + hits) as f64 / (1 + MONTE_CARLO_DRAWS) as f64, false)
    }
}

/// The exact null distribution of the sum of ±magnitudes, each sign equally likely.
struct SignFlipDistribution {
    /// probability[s + span] = P(sum of flipped values = s)
    probability: Vec<f64>,
    span: usize,
}

impl SignFlipDistribution {
    /// `None` when the table would exceed [`EXACT_TABLE_LIMIT`] entries.
    fn exact(magnitudes: &[usize]) -> Option<SignFlipDistribution> {
        let span: usize = magnitudes.iter().sum();
        if 2 * span >= EXACT_TABLE_LIMIT {
            return None;
        }
        let width = 2 * span + 1;
        let mut probability = vec![0.0_f64; width];
        probability[span] = 1.0;
        let mut reach = 0;
        for &k in magnitudes {
            let mut next = vec![0.0_f64; width];
            for s in span - reach..=span + reach {
                let p = probability[s];
                if p != 0.0 {
                    next[s + k] += 0.5 * p;
                    next[s - k] += 0.5 * p;
                }
            }
            probability = next;
            reach += k;
        }
        Some(SignFlipDistribution { probability, span })
    }

    /// P(|sum| ≥ observed).
    fn tail(&self, observed: usize) -> f64 {
        let tail: f64 = self
            .probability
            .iter()
            .enumerate()
            .filter(|&(i, _)| i.abs_diff(self.span) >= observed)
            .map(|(_, p)| p)
            .sum();
        tail.min(1.0)
    }

    /// The smallest |sum| whose p-value is below `level`; `None` when none is.
    fn critical(&self, level: f64) -> Option<usize> {
        if self.tail(self.span) >= level {
            return None;
        }
        // The tail shrinks as the sum grows: the first sum below the level, by bisection.
        let (mut low, mut high) = (0, self.span);
        while high - low > 1 {
            let middle = (low + high) / 2;
            if self.tail(middle) < level {
                high = middle;
            } else {
                low = middle;
            }
        }
        Some(if self.tail(low) < level { low } else { high })
    }
}

/// The smallest p-value the sign-flip test can give with `n` non-zero differences: all of one
/// sign, 2 / 2^n.
pub fn smallest_sign_flip_p(n: usize) -> f64 {
    if n == 0 {
        1.0
    } else {
        (2.0 * 0.5f64.powi(n as i32)).min(1.0)
    }
}

/// Holm's step-down adjustment: sort the m p-values, multiply the i-th smallest (from 1) by
/// m − i + 1, carry the running maximum up, and cap at 1. A hypothesis is rejected at level α
/// exactly when its adjusted p is below α. Order of the output follows the input. No report
/// uses it since decision 015; tests/verdict_shapes.rs compares the family test with it.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[index]).min(1.0));
        adjusted[index] = running;
    }
    adjusted
}

/// Mean and unbiased variance; `None` for the variance with fewer than two values.
pub fn mean_and_variance(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = (values.len() > 1)
        .then(|| values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0));
    (mean, variance)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Least common multiple: the common denominator of pass fractions over different repeats.
pub fn lcm(a: usize, b: usize) -> usize {
    a / gcd(a, b) * b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The p-value by listing every sign pattern: the definition the fast path must agree with.
    fn enumerated_p(numerators: &[i64]) -> f64 {
        let n = numerators.len();
        let observed: i64 = numerators.iter().sum::<i64>().abs();
        let hits = (0..1u32 << n)
            .filter(|mask| {
                let sum: i64 = numerators
                    .iter()
                    .enumerate()
                    .map(|(i, k)| if mask >> i & 1 == 1 { -k } else { *k })
                    .sum();
                sum.abs() >= observed
            })
            .count();
        hits as f64 / f64::from(1u32 << n)
    }

    #[test]
    fn the_permutation_p_matches_enumeration_on_small_samples() {
        let mut rng = Rng::new(7);
        for case in 0..300 {
            let n = 1 + case % 12;
            let numerators: Vec<i64> = (0..n).map(|_| rng.below(7) as i64 - 3).collect();
            let expected = enumerated_p(&numerators);
            let got = sign_flip_p(&numerators, 1);
            assert!(
                (got - expected).abs() < 1e-12,
                "{numerators:?}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn permutation_p_by_hand() {
        // Three samples all +1: patterns with |sum| = 3 are +++ and ---: 2 of 8.
        assert_eq!(sign_flip_p(&[1, 1, 1], 0), 0.25);
        assert_eq!(smallest_sign_flip_p(3), 0.25);
        // Zeros do not move under a flip and do not change p.
        assert_eq!(sign_flip_p(&[1, 1, 1, 0, 0], 0), 0.25);
        assert_eq!(sign_flip_p(&[0, 0], 0), 1.0);
        // Six of one sign: 2/64, the sign test's value.
        assert_eq!(sign_flip_p(&[1; 6], 0), 0.03125);
        // {+2, +1}: sums 3, 1, −1, −3; |sum| ≥ 3 in 2 of 4.
        assert_eq!(sign_flip_p(&[2, 1], 0), 0.5);
        // {+2, −1}: observed |1|, every pattern reaches it.
        assert_eq!(sign_flip_p(&[2, -1], 0), 1.0);
    }

    #[test]
    fn the_monte_carlo_fallback_is_close_to_the_exact_value() {
        // 40 values of magnitude 100 000 overflow the exact table; the same pattern scaled
        // down to 1 is exact. 26 of 40 positive: sum 12.
        let small: Vec<i64> = (0..40).map(|i| if i < 26 { 1 } else { -1 }).collect();
        let big: Vec<i64> = small.iter().map(|k| k * 100_000).collect();
        let exact = sign_flip_p(&small, 0);
        let drawn = sign_flip_p(&big, 3);
        assert!((exact - drawn).abs() < 0.005, "{exact} vs {drawn}");
        assert_eq!(drawn, sign_flip_p(&big, 3), "seeded");
    }

    #[test]
    fn holm_matches_a_worked_example() {
        // Four hypotheses with p = 0.01, 0.04, 0.03, 0.005 (Holm 1979's procedure by hand):
        // sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04;
        // running maximum 0.02, 0.03, 0.06, 0.06.
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{adjusted:?}");
        }
        // 0.2 × 2 = 0.4, then 0.9 × 1 = 0.9; and 0.5 × 2 = 1.0 carries up over 0.9.
        assert_eq!(holm(&[0.2, 0.9]), vec![0.4, 0.9]);
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.6, 0.7]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn the_report_s_resamples_put_interval_ends_within_a_fifth_of_a_point() {
        // A category-sized row: 15 per-sample differences of thirds. Across ten seeds, each end
        // of the interval moves by less than 0.2 pp at the report's resample count.
        let values: Vec<f64> = [1, 0, 0, -1, 2, 1, 0, 3, 1, 0, -2, 1, 1, 0, 2]
            .iter()
            .map(|&k| f64::from(k) / 3.0)
            .collect();
        let strata = vec![values];
        let ends: Vec<Interval> = (0..10)
            .map(|seed| {
                bootstrap_mean_interval(
                    &strata,
                    crate::eval::stats::BOOTSTRAP_RESAMPLES,
                    0.95,
                    seed,
                )
                .unwrap()
            })
            .collect();
        let spread = |pick: fn(&Interval) -> f64| {
            let xs: Vec<f64> = ends.iter().map(pick).collect();
            xs.iter().copied().fold(f64::MIN, f64::max)
                - xs.iter().copied().fold(f64::MAX, f64::min)
        };
        assert!(
            spread(|i| i.low) < 0.002,
            "low ends spread {}",
            spread(|i| i.low)
        );
        assert!(
            spread(|i| i.high) < 0.002,
            "high ends spread {}",
            spread(|i| i.high)
        );
    }

    #[test]
    fn the_bootstrap_covers_a_known_mean_and_is_reproducible() {
        // Constant values: every resample has the same mean.
        let flat = bootstrap_mean_interval(&[vec![0.5; 10]], 200, 0.95, 1).unwrap();
        assert_eq!((flat.low, flat.high), (0.5, 0.5));
        // Values 0 or 1 with mean 0.5 over 100: the interval is about 0.5 ± 1.96 × 0.05.
        let coin: Vec<f64> = (0..100).map(|i| f64::from(i % 2)).collect();
        let interval = bootstrap_mean_interval(std::slice::from_ref(&coin), 4000, 0.95, 2).unwrap();
        assert!((interval.low - 0.402).abs() < 0.02, "{interval:?}");
        assert!((interval.high - 0.598).abs() < 0.02, "{interval:?}");
        assert_eq!(
            Some(interval),
            bootstrap_mean_interval(&[coin], 4000, 0.95, 2)
        );
        // Strata keep their sizes: a stratum of all 1 and one of all 0 never mix.
        let fixed = bootstrap_mean_interval(&[vec![1.0; 3], vec![0.0; 2]], 100, 0.95, 3).unwrap();
        assert!((fixed.low - 0.6).abs() < 1e-12 && (fixed.high - 0.6).abs() < 1e-12);
        // Two values {0, 1}: plain resampling gives the mean a variance of 1/8, the rescaled
        // one 1/4, the variance of the mean of two draws from {0, 1}: the interval reaches
        // 0.5 ± √2 × 0.5 = [−0.21, 1.21] at its extremes (resampled means 0 and 1).
        let pair = bootstrap_mean_interval(&[vec![0.0, 1.0]], 1000, 0.95, 4).unwrap();
        assert!(
            (pair.low - (0.5 - 0.5 * 2f64.sqrt())).abs() < 1e-9,
            "{pair:?}"
        );
        assert!(
            (pair.high - (0.5 + 0.5 * 2f64.sqrt())).abs() < 1e-9,
            "{pair:?}"
        );
        // Single-value strata are pooled, so they do vary.
        let singles = bootstrap_mean_interval(&[vec![0.0], vec![1.0]], 1000, 0.95, 5).unwrap();
        assert!(singles.low < 0.0 && singles.high > 1.0, "{singles:?}");
        assert_eq!(bootstrap_mean_interval(&[vec![]], 100, 0.95, 3), None);
    }

    #[test]
    fn the_bootstrap_interval_covers_the_truth_about_95_percent_of_the_time() {
        // Simulated truth: samples of 30 draws from {0, 1} with mean 0.3.
        let mut rng = Rng::new(11);
        let trials = 400;
        let covered = (0..trials)
            .filter(|t| {
                let values: Vec<f64> = (0..30)
                    .map(|_| f64::from(u8::from(rng.unit() < 0.3)))
                    .collect();
                let i = bootstrap_mean_interval(&[values], 1000, 0.95, *t as u64).unwrap();
                i.low <= 0.3 && 0.3 <= i.high
            })
            .count();
        let rate = covered as f64 / trials as f64;
        assert!((0.89..=0.98).contains(&rate), "coverage {rate}");
    }
}
