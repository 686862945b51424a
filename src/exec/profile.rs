//! Where a run's time and tokens went: per-unit figures summed, the wall time, the process's
//! peak memory and, when a batched engine served the run, the engine's own figures.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::harness::backend::EngineStats;
use crate::harness::transcript::Transcript;

/// Where a run's time and tokens went. Token rates divide a phase's tokens by the time spent in
/// that phase: at `--parallel 1` the units' own prefill and decode times, which do not overlap;
/// with the batched engine its time in decode calls that carried prompt tokens (prefill) or only
/// generated tokens (decode), set by [`Profile::attach_engine`]. The phase split of `table` sums
/// each unit's own time, which overlaps with other units' when they run at once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub parallel: usize,
    pub units: usize,
    pub wall_secs: f64,
    pub samples_per_sec: f64,
    /// Loading the model and creating its context, before the run started.
    #[serde(default)]
    pub model_load_secs: f64,
    /// From the start of the run to the first finished unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_unit_secs: Option<f64>,
    pub generations: u64,
    pub prompt_tokens: u64,
    /// Prompt tokens taken from the prefix cache instead of computed.
    pub cached_prompt_tokens: u64,
    /// Generations that reused a cached prefix.
    pub prefix_hits: u64,
    pub generated_tokens: u64,
    /// Computed prompt tokens per second of prefill.
    pub prefill_tokens_per_sec: f64,
    /// Generated tokens per second of decoding.
    pub decode_tokens_per_sec: f64,
    /// Peak resident memory of the process (Linux `VmHWM`).
    pub peak_memory_bytes: Option<u64>,
    pub prefill_secs: f64,
    pub decode_secs: f64,
    pub tool_secs: f64,
    /// Judging and everything else a unit does outside the harness loop.
    pub judge_secs: f64,
    /// The batched engine's own figures, when it served the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineStats>,
    /// When the run started, for `first_unit_secs`.
    #[serde(skip)]
    started: Option<Instant>,
}

/// `tokens` per second of `secs`, 0 when no time was spent.
fn rate(tokens: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        tokens as f64 / secs
    } else {
        0.0
    }
}

impl Profile {
    /// A profile whose run starts now.
    pub fn new(parallel: usize) -> Self {
        Profile {
            parallel,
            started: Some(Instant::now()),
            ..Profile::default()
        }
    }

    /// Counts one finished unit, whose harness loop left `transcript`, that took `unit_secs` in
    /// all.
    pub fn add(&mut self, transcript: &Transcript, unit_secs: f64) {
        let since_start = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        self.add_at(transcript, unit_secs, since_start);
    }

    /// `add`, for a unit that finished `since_start` seconds into the run.
    pub fn add_at(&mut self, transcript: &Transcript, unit_secs: f64, since_start: f64) {
        let m = &transcript.metrics;
        self.units += 1;
        if self.first_unit_secs.is_none() {
            self.first_unit_secs = Some(since_start);
        }
        for round in &transcript.rounds {
            self.generations += 1;
            self.cached_prompt_tokens += u64::from(round.metrics.cached_prompt_tokens);
            self.prefix_hits += u64::from(round.metrics.cached_prompt_tokens > 0);
        }
        self.prompt_tokens += u64::from(m.prompt_tokens);
        self.generated_tokens += u64::from(m.generated_tokens);
        self.prefill_secs += m.prefill_secs;
        self.decode_secs += m.decode_secs;
        self.tool_secs += m.tool_secs;
        self.judge_secs += (unit_secs - m.wall_secs).max(0.0);
    }

    /// Sets the figures that need the run's wall time. The token rates divide by the units'
    /// summed phase times until [`Profile::attach_engine`] replaces them.
    pub fn set_wall_time(&mut self, wall_secs: f64) {
        self.wall_secs = wall_secs;
        self.samples_per_sec = rate(self.units as u64, wall_secs);
        self.prefill_tokens_per_sec = rate(self.computed_prompt_tokens(), self.prefill_secs);
        self.decode_tokens_per_sec = rate(self.generated_tokens, self.decode_secs);
        self.peak_memory_bytes = peak_memory_bytes();
    }

    /// Keeps the batched engine's figures and takes its rates: prompt tokens computed per second
    /// of decode calls that carried them, generated tokens per second of calls that only
    /// generated. Units waiting on shared batches overlap, so their own times would not do.
    pub fn attach_engine(&mut self, stats: EngineStats) {
        self.prefill_tokens_per_sec = rate(
            stats
                .prompt_tokens
                .saturating_sub(stats.cached_prompt_tokens),
            stats.prefill_secs,
        );
        self.decode_tokens_per_sec = rate(stats.decode_only_tokens, stats.decode_secs);
        self.engine = Some(stats);
    }

    fn computed_prompt_tokens(&self) -> u64 {
        self.prompt_tokens.saturating_sub(self.cached_prompt_tokens)
    }

    /// One line for the run summary.
    pub fn line(&self) -> String {
        format!(
            "{} units in {:.1}s ({:.2}/s) · parallel {} · model load {:.1}s · first unit {} · prefill {:.0} tok/s · decode {:.0} tok/s · prefix cache {}/{} generations, {} of {} prompt tokens",
            self.units,
            self.wall_secs,
            self.samples_per_sec,
            self.parallel,
            self.model_load_secs,
            self.first_unit_secs
                .map_or("-".to_string(), |s| format!("{s:.1}s")),
            self.prefill_tokens_per_sec,
            self.decode_tokens_per_sec,
            self.prefix_hits,
            self.generations,
            self.cached_prompt_tokens,
            self.prompt_tokens
        )
    }

    /// Where the time went, for `--profile` (the summary line is `line`).
    pub fn table(&self) -> String {
        let phases = [
            ("prefill", self.prefill_secs),
            ("decode", self.decode_secs),
            ("tools", self.tool_secs),
            ("judging and other", self.judge_secs),
        ];
        let total: f64 = phases.iter().map(|(_, s)| s).sum();
        let mut out = String::new();
        if let Some(bytes) = self.peak_memory_bytes {
            out.push_str(&format!(
                "peak memory {:.0} MiB\n",
                bytes as f64 / (1024.0 * 1024.0)
            ));
        }
        out.push_str("time per phase, summed over units:\n");
        for (name, secs) in phases {
            let share = if total > 0.0 {
                100.0 * secs / total
            } else {
                0.0
            };
            out.push_str(&format!("  {name:<18} {secs:>9.1}s {share:>5.1}%\n"));
        }
        out
    }
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), if the system says.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A finished unit's transcript with one round per `(cached prompt tokens,)` entry and the
    /// given totals.
    fn transcript(
        prompt_tokens: u32,
        cached: &[u32],
        generated_tokens: u32,
        prefill_secs: f64,
        decode_secs: f64,
        wall_secs: f64,
    ) -> Transcript {
        let rounds: Vec<_> = cached
            .iter()
            .map(|c| {
                json!({
                    "raw": "", "finish": {"kind": "eos"}, "calls": [], "prose": "",
                    "repairs": [], "problems": [],
                    "metrics": {"prompt_tokens": 0, "cached_prompt_tokens": c, "generated_tokens": 0,
                                "prefill_secs": 0.0, "decode_secs": 0.0, "ttft_secs": 0.0}
                })
            })
            .collect();
        serde_json::from_value(json!({
            "rounds": rounds, "reply": "", "stop": {"kind": "answered"}, "loaded_skills": [],
            "metrics": {"rounds": cached.len(), "prompt_tokens": prompt_tokens,
                        "generated_tokens": generated_tokens, "prefill_secs": prefill_secs,
                        "decode_secs": decode_secs, "ttft_secs": 0.1, "tool_secs": 0.0,
                        "wall_secs": wall_secs}
        }))
        .unwrap()
    }

    #[test]
    fn rates_divide_by_the_time_in_their_phase_not_the_wall_time() {
        // Two units one after the other: 39 tokens in 1 s of decoding each, 2 s each in all
        // (prefill, tools, judging), so 4 s of wall time. Decoding ran at 39 tokens/s; the wall
        // time would have said 19.5.
        let mut profile = Profile::new(1);
        profile.model_load_secs = 0.8;
        profile.add_at(&transcript(300, &[0, 200], 39, 0.5, 1.0, 1.5), 2.0, 2.0);
        profile.add_at(&transcript(300, &[100, 200], 39, 0.5, 1.0, 1.5), 2.0, 4.0);
        profile.set_wall_time(4.0);
        assert_eq!(profile.decode_tokens_per_sec, 39.0);
        // 600 prompt tokens, 500 of them cached: 100 computed in 1 s.
        assert_eq!(profile.prefill_tokens_per_sec, 100.0);
        assert_eq!(profile.samples_per_sec, 0.5);
        assert_eq!(profile.first_unit_secs, Some(2.0));
        assert_eq!(profile.judge_secs, 1.0);
        let line = profile.line();
        assert!(line.contains("decode 39 tok/s"), "{line}");
        assert!(line.contains("prefill 100 tok/s"), "{line}");
        assert!(line.contains("model load 0.8s · first unit 2.0s"), "{line}");
    }

    #[test]
    fn the_engine_rates_replace_the_overlapping_unit_times() {
        let mut profile = Profile::new(4);
        for _ in 0..4 {
            // Four units at once, each waiting 3 s in shared decode calls.
            profile.add_at(&transcript(100, &[0], 50, 1.0, 3.0, 4.0), 4.0, 4.0);
        }
        profile.set_wall_time(4.0);
        let stats = EngineStats {
            prompt_tokens: 400,
            cached_prompt_tokens: 100,
            prefill_secs: 1.5,
            decode_only_tokens: 180,
            decode_secs: 2.0,
            ..EngineStats::default()
        };
        profile.attach_engine(stats);
        assert_eq!(profile.prefill_tokens_per_sec, 200.0);
        assert_eq!(profile.decode_tokens_per_sec, 90.0);
        assert!(profile.engine.is_some());
    }

    #[test]
    fn no_time_in_a_phase_gives_a_zero_rate_and_no_first_unit_a_dash() {
        let mut profile = Profile::new(1);
        profile.set_wall_time(0.0);
        assert_eq!(
            (
                profile.prefill_tokens_per_sec,
                profile.decode_tokens_per_sec
            ),
            (0.0, 0.0)
        );
        assert!(profile.line().contains("first unit -"));
    }
}
