//! The numerical parts of the method, free of outcomes and arms: a seeded random source, the
//! paired bootstrap, the sign-flip permutation test, Holm's adjustment, and the minimum
//! detectable effect: simulated from the sign-flip test itself ([`PowerModel`]) or from
//! Student's t, with the variance a target effect allows.
//!
//! Everything here is deterministic: a random step takes its seed from the caller.

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
/// exactly when its adjusted p is below α. Order of the output follows the input.
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

/// Quantile of Student's t distribution, by bisection on its distribution function.
pub fn student_t_quantile(probability: f64, df: f64) -> f64 {
    if probability == 0.5 {
        return 0.0;
    }
    if probability < 0.5 {
        return -student_t_quantile(1.0 - probability, df);
    }
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while student_t_cdf(high, df) < probability {
        high *= 2.0;
        if high > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..100 {
        let middle = 0.5 * (low + high);
        if student_t_cdf(middle, df) < probability {
            low = middle;
        } else {
            high = middle;
        }
    }
    0.5 * (low + high)
}

/// Distribution function of Student's t: 1 − ½ I_{df/(df+t²)}(df/2, ½) for t ≥ 0.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * regularized_incomplete_beta(x, df / 2.0, 0.5);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// I_x(a, b) by its continued fraction (Numerical Recipes' `betai`/`betacf`).
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_continued_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_continued_fraction(1.0 - x, b, a) / b
    }
}

fn beta_continued_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series where it is accurate.
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (i, c) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
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

    #[test]
    fn student_t_matches_tables() {
        // Each checked by integrating the density numerically (Simpson, 200 000 steps);
        // printed tables round them to 2.145, 12.706, 0.868, 3.326, 1.962.
        for (p, df, t) in [
            (0.975, 14.0, 2.144_787),
            (0.975, 1.0, 12.706_205),
            (0.8, 14.0, 0.868_055),
            (0.9975, 14.0, 3.325_696),
            (0.975, 1000.0, 1.962_339),
        ] {
            let got = student_t_quantile(p, df);
            assert!((got - t).abs() < 1e-4, "t({p}, {df}) = {got}, table {t}");
        }
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
