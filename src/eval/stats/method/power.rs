//! The minimum detectable effect: the power of a row's own sign-flip test found by
//! simulation ([`PowerModel`]), or promised by the one-sample t-test's formula for large rows,
//! and the variance a target effect allows.

use super::student_t::{student_t_cdf, student_t_quantile};
use super::{lcm, Rng, SignFlipDistribution};

/// The smallest mean difference δ that a two-sided test at `level` detects with probability
/// `power`, for `n` per-sample differences of variance `variance` and `df` degrees of freedom:
/// δ = (t_{df, 1−level/2} + t_{df, power})·√(v / n) + `step` / 2, the one-sample t-test's
/// power formula with a continuity correction of half the `step` between attainable values of
/// the sign-flip test's mean. The sign-flip test is the permutation form of that t-test and
/// has about its power on large rows; on small ones its discreteness costs power the formula
/// does not see, and [`PowerModel`] is used instead. `None` when df is 0 or no δ ≤ 1
/// suffices.
pub fn detectable_effect(
    n: usize,
    variance: f64,
    df: usize,
    step: f64,
    level: f64,
    power: f64,
) -> Option<f64> {
    let k = detectable_multiplier(df, level, power)?;
    let effect = k * (variance.max(0.0) / n as f64).sqrt() + step / 2.0;
    (effect <= 1.0).then_some(effect)
}

/// t_{df, 1−level/2} + t_{df, power}; `None` when df is 0.
fn detectable_multiplier(df: usize, level: f64, power: f64) -> Option<f64> {
    // A report asks for the same few (df, level) pairs many times; the quantiles are slow.
    thread_local! {
        static KNOWN: std::cell::RefCell<std::collections::HashMap<[u64; 3], f64>> =
            Default::default();
    }
    if df == 0 {
        return None;
    }
    let key = [df as u64, level.to_bits(), power.to_bits()];
    if let Some(known) = KNOWN.with(|k| k.borrow().get(&key).copied()) {
        return Some(known);
    }
    let df_f = df as f64;
    let multiplier = student_t_quantile(1.0 - level / 2.0, df_f) + student_t_quantile(power, df_f);
    KNOWN.with(|k| k.borrow_mut().insert(key, multiplier));
    Some(multiplier)
}

/// The power the same approximation promises against a true mean difference `effect`:
/// P(T_df > t_{df, 1−level/2} − √n·(δ − step/2)/σ).
pub fn promised_power(
    n: usize,
    variance: f64,
    df: usize,
    step: f64,
    level: f64,
    effect: f64,
) -> f64 {
    if df == 0 {
        return 0.0;
    }
    let df = df as f64;
    let corrected = (effect.abs() - step / 2.0).max(0.0);
    let shift = (n as f64).sqrt() * corrected / variance.max(1e-300).sqrt();
    1.0 - student_t_cdf(student_t_quantile(1.0 - level / 2.0, df) - shift, df)
}

/// The largest variance of the per-sample differences at which `n` samples still detect
/// `effect` with `power` at `level`: n·((effect − step/2) / k)², k the multiplier of
/// [`detectable_effect`]. `None` when no variance would do.
pub fn largest_variance_for(
    n: usize,
    df: usize,
    step: f64,
    effect: f64,
    level: f64,
    power: f64,
) -> Option<f64> {
    let k = detectable_multiplier(df, level, power)?;
    let room = effect - step / 2.0;
    (room > 0.0).then(|| n as f64 * (room / k).powi(2))
}

/// Simulated runs per candidate effect in a [`PowerModel`].
pub const POWER_DRAWS: usize = 500;
/// Width of the bracket at which the search for a simulated MDE stops.
const RESOLUTION: f64 = 0.002;

/// The power of a row's own test against a true change, found by simulating the row.
///
/// Each sample keeps its number of scored repeats and gets a pass probability under no effect
/// (both arms' pooled pass fraction, smoothed: (passes + ½) / (runs + 1), so that a sample that
/// always passed can still fail). A change of δ moves every sample's probability by the same c
/// in its direction, clipped at 0 and 1, with c chosen so that the mean moves by δ. Each
/// simulated run draws both arms' passes, and counts as found when the exact sign-flip test's p
/// is below the level with the sign of the change: the test the verdict uses, with the samples
/// that cannot move (d = 0) weighing nothing, as they do in it. The draws are seeded and shared
/// by every δ (common random numbers), so the power rises with δ as it should.
#[derive(Debug, Clone)]
pub struct PowerModel {
    /// Per sample: pass probability under no effect, and scored repeats.
    samples: Vec<(f64, usize)>,
    /// Common denominator of the repeat counts.
    denominator: usize,
    level: f64,
    /// One uniform per simulated run and sample: row-major, [`POWER_DRAWS`] × samples.
    uniforms: Vec<f64>,
}

impl PowerModel {
    /// `samples`: per sample, (reference passes, treatment passes, scored repeats per arm).
    pub fn new(samples: &[(usize, usize, usize)], level: f64, seed: u64) -> PowerModel {
        let samples: Vec<(f64, usize)> = samples
            .iter()
            .filter(|&&(.., m)| m > 0)
            .map(|&(r, t, m)| (((r + t) as f64 + 0.5) / (2 * m + 1) as f64, m))
            .collect();
        let denominator = samples.iter().fold(1, |l, &(_, m)| lcm(l, m));
        let mut rng = Rng::new(seed);
        let uniforms = (0..POWER_DRAWS * samples.len())
            .map(|_| rng.unit())
            .collect();
        PowerModel {
            samples,
            denominator,
            level,
            uniforms,
        }
    }

    /// The largest mean change the samples leave room for, upwards or downwards.
    pub fn room(&self, up: bool) -> f64 {
        let n = self.samples.len().max(1) as f64;
        self.samples
            .iter()
            .map(|&(p, _)| {
                let (r, t) = arms(p, 2.0, up);
                (t - r).abs()
            })
            .sum::<f64>()
            / n
    }

    /// The common move c of every sample's probability that moves their mean by `effect`.
    fn shift_for(&self, effect: f64, up: bool) -> f64 {
        let n = self.samples.len() as f64;
        let gain = |c: f64| {
            self.samples
                .iter()
                .map(|&(p, _)| {
                    let (r, t) = arms(p, c, up);
                    (t - r).abs()
                })
                .sum::<f64>()
                / n
        };
        let (mut low, mut high) = (0.0, 2.0);
        for _ in 0..50 {
            let middle = 0.5 * (low + high);
            if gain(middle) < effect {
                low = middle;
            } else {
                high = middle;
            }
        }
        high
    }

    /// The share of simulated runs whose test finds a true mean change `effect` (positive: the
    /// treatment passes more) at the level, with its sign. `None` when the samples leave no
    /// room for a change that large, or there are no samples.
    pub fn power(&self, effect: f64) -> Option<f64> {
        let up = effect >= 0.0;
        let effect = effect.abs();
        if self.samples.is_empty() || effect > self.room(up) + 1e-12 {
            return None;
        }
        let c = self.shift_for(effect, up);
        let denominator = self.denominator;
        // Per sample: the distribution function of k = treatment passes − reference passes
        // (k from −m to m), and the weight of one pass in units of 1/(denominator).
        let tables: Vec<(Vec<f64>, usize, i64)> = self
            .samples
            .iter()
            .map(|&(p, m)| {
                let (p, q) = arms(p, c, up);
                let (reference, treatment) = (binomial(m, p), binomial(m, q));
                let mut cumulative = vec![0.0; 2 * m + 1];
                let mut running = 0.0;
                for (j, slot) in cumulative.iter_mut().enumerate() {
                    // k = j − m
                    for (t, pt) in treatment.iter().enumerate() {
                        if let Some(r) = (t + m).checked_sub(j) {
                            if r <= m {
                                running += pt * reference[r];
                            }
                        }
                    }
                    *slot = running;
                }
                (cumulative, m, (denominator / m) as i64)
            })
            .collect();
        let n = self.samples.len();
        // Fewer non-zero differences than this cannot reach the level: 2 / 2^n ≥ level.
        let fewest = (2.0 / self.level).log2().floor() as usize + 1;
        let mut counts = vec![0u16; denominator + 1];
        let found = CRITICAL.with(|known| {
            let mut known = known.borrow_mut();
            if known.len() > 64 {
                known.clear();
            }
            let known = known.entry(self.level.to_bits()).or_default();
            if known.len() > 200_000 {
                known.clear();
            }
            let mut found = 0usize;
            for draw in self.uniforms.chunks_exact(n) {
                counts.iter_mut().for_each(|c| *c = 0);
                let mut sum = 0i64;
                for (&u, (cumulative, m, weight)) in draw.iter().zip(&tables) {
                    // The first k whose distribution function exceeds u, counted without
                    // branches: how many of the first 2m values u reaches.
                    let j = cumulative[..2 * m].iter().filter(|&&f| u >= f).count();
                    let k = (j as i64 - *m as i64) * weight;
                    sum += k;
                    counts[k.unsigned_abs() as usize] += 1;
                }
                if (sum > 0) != up || sum == 0 || n - usize::from(counts[0]) < fewest {
                    continue;
                }
                counts[0] = 0;
                let key = pattern_key(&counts);
                let critical = match known.get(&key) {
                    Some(&critical) => critical,
                    None => {
                        let magnitudes: Vec<usize> = counts
                            .iter()
                            .enumerate()
                            .flat_map(|(k, &c)| std::iter::repeat_n(k, usize::from(c)))
                            .collect();
                        let critical = SignFlipDistribution::exact(&magnitudes)
                            .and_then(|d| d.critical(self.level));
                        known.insert(key, critical);
                        critical
                    }
                };
                if critical.is_some_and(|critical| sum.unsigned_abs() as usize >= critical) {
                    found += 1;
                }
            }
            found
        });
        Some(found as f64 / POWER_DRAWS as f64)
    }

    /// The smallest change δ such that a change of δ either way, where the samples leave room
    /// for it, is found with probability `power`: the larger of the two directions' figures,
    /// where a direction that cannot reach `power` within its room counts as its room. `None`
    /// when no δ the samples leave room for suffices.
    pub fn detectable_effect(&self, power: f64) -> Option<f64> {
        if self.samples.is_empty() {
            return None;
        }
        let mut needed = 0.0_f64;
        for up in [true, false] {
            needed = needed.max(self.detectable_in(up, power).unwrap_or(self.room(up)));
        }
        let reachable = self.room(true).max(self.room(false));
        (needed < reachable).then_some(needed)
    }

    /// The smallest rise and the smallest decline found with probability `power`, each `None`
    /// when the samples leave too little room for a change that is found that often.
    pub fn detectable_effects(&self, power: f64) -> (Option<f64>, Option<f64>) {
        if self.samples.is_empty() {
            return (None, None);
        }
        (
            self.detectable_in(true, power),
            self.detectable_in(false, power),
        )
    }

    /// The smallest change in one direction found with probability `power`; `None` when not
    /// even the largest change the samples leave room for is.
    fn detectable_in(&self, up: bool, power: f64) -> Option<f64> {
        {
            let room = self.room(up);
            let sign = if up { 1.0 } else { -1.0 };
            let short = |effect: f64| self.power(sign * effect).unwrap_or(0.0) - power;
            let (mut low, mut high) = (0.0, room);
            let (mut f_low, mut f_high) = (short(low), short(high));
            if f_high < 0.0 || room <= 0.0 {
                return None;
            }
            // Regula falsi kept inside the bracket's middle eight tenths, so that the step
            // curve of the simulated power cannot stall it.
            while high - low > RESOLUTION {
                let width = high - low;
                let guess = if f_low < 0.0 && f_high >= 0.0 {
                    low + width * (-f_low / (f_high - f_low))
                } else {
                    low + 0.5 * width
                };
                let middle = guess.clamp(low + 0.1 * width, high - 0.1 * width);
                let f = short(middle);
                if f >= 0.0 {
                    (high, f_high) = (middle, f);
                } else {
                    (low, f_low) = (middle, f);
                }
            }
            Some(high)
        }
    }
}

/// By level's bits, then by count of each magnitude: the critical |sum| (`None`: none rejects).
type CriticalSums =
    std::collections::HashMap<u64, std::collections::HashMap<PatternKey, Option<usize>>>;

/// How many samples have each magnitude: packed in a number when the counts fit, as is usual.
#[derive(PartialEq, Eq, Hash)]
enum PatternKey {
    Packed(u64),
    Listed(Vec<u16>),
}

fn pattern_key(counts: &[u16]) -> PatternKey {
    if counts.len() <= 8 && counts.iter().all(|&c| c < 256) {
        PatternKey::Packed(
            counts
                .iter()
                .fold(0u64, |key, &c| (key << 8) | u64::from(c)),
        )
    } else {
        PatternKey::Listed(counts.to_vec())
    }
}

thread_local! {
    /// Critical sums of the sign-flip test, by level and by how many samples have each
    /// magnitude: a row's simulation meets the same few patterns many times.
    static CRITICAL: std::cell::RefCell<CriticalSums> = Default::default();
}

/// (reference, treatment) probabilities of a sample whose probability under no effect is p,
/// under a move of c upwards or downwards.
fn arms(p: f64, c: f64, up: bool) -> (f64, f64) {
    if up {
        (p, (p + c).min(1.0))
    } else {
        (p, (p - c).max(0.0))
    }
}

/// P(X = k) for X ~ Binomial(m, p), k = 0..=m.
fn binomial(m: usize, p: f64) -> Vec<f64> {
    let mut coefficient = 1.0;
    (0..=m)
        .map(|k| {
            if k > 0 {
                coefficient *= (m - k + 1) as f64 / k as f64;
            }
            coefficient * p.powi(k as i32) * (1.0 - p).powi((m - k) as i32)
        })
        .collect()
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detectable_effect_has_the_promised_power() {
        let (n, v, level) = (15, 0.1, 0.005);
        let step = 1.0 / 45.0;
        let mde = detectable_effect(n, v, 14, step, level, 0.8).unwrap();
        // (3.325696 + 0.868055) × √(0.1 / 15) + 1/90, t quantiles with 14 degrees of freedom.
        let by_hand = 4.193_751 * (0.1f64 / 15.0).sqrt() + 1.0 / 90.0;
        assert!((mde - by_hand).abs() < 1e-4, "{mde}");
        assert!((promised_power(n, v, 14, step, level, mde) - 0.8).abs() < 0.01);
        assert_eq!(detectable_effect(1, v, 0, step, level, 0.8), None);
        assert!(detectable_effect(n, 0.2, 14, step, level, 0.8).unwrap() > mde);
        let room = largest_variance_for(n, 14, step, mde, level, 0.8).unwrap();
        assert!((room - v).abs() < 1e-9, "{room}");
    }
}
