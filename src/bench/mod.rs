//! BFCL-style function-calling benchmark: vendored corpora, BFCL's prompting-mode prompt,
//! its AST checker, and result files in its format.
//!
//! Two ways to put an entry to a model: [`prompt_entry`] sends BFCL's own prompt and scores the
//! raw reply; [`harness_mode::harness_entry`] offers the entry's functions as tools through
//! skilleval's harness and scores the calls of its first round. Multi-turn and memory entries
//! go through BFCL's own code (`multi_turn`). A whole run is `run::run`.

pub mod check_types;
pub mod checker;
pub mod corpus;
pub mod harness_mode;
pub mod java_js_check;
pub mod java_js_convert;
pub mod java_js_decode;
pub mod multi_turn;
pub mod multi_turn_helper;
pub mod overall;
pub mod prompt;
pub mod report;
pub mod result_layout;
pub mod run;
pub mod score;
pub mod selection;
pub mod sinks;
pub mod value_check;

use serde::{Deserialize, Serialize};

use crate::exec::seed::sample_seed;
use crate::harness::backend::{Backend, GenMetrics, GenRequest, Sampling};

use check_types::CheckResult;
use corpus::Entry;
use score::{check_entry, ResultLine};

/// Salt of the per-entry seeds, so they differ from those of `skilleval run` for equal ids.
const SEED_SALT: &str = "bench";

/// The seed of one entry in one repeat, derived from (run seed, id, repeat).
pub fn entry_seed(run_seed: u64, entry_id: &str, repeat: u32) -> u32 {
    sample_seed(run_seed, entry_id, repeat, SEED_SALT)
}

/// How entries reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// BFCL's prompting-mode prompt, byte for byte; the raw reply is decoded and checked.
    Prompt,
    /// The entry's functions as harness tools; the first round's calls are checked.
    Harness,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Prompt => "prompt",
            Mode::Harness => "harness",
        }
    }
}

/// How one entry is put to the model (a whole run's settings are `run::BenchOptions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryOptions {
    pub max_tokens: u32,
    /// Greedy by default. Its `seed` is not used: each entry samples with
    /// [`EntryOptions::seed_for`].
    pub sampling: Sampling,
    pub run_seed: u64,
    /// Which repeat this is (1-based); it goes into every entry's seed.
    pub repeat: u32,
}

impl Default for EntryOptions {
    fn default() -> Self {
        EntryOptions {
            max_tokens: 256,
            sampling: Sampling::default(),
            run_seed: 0,
            repeat: 1,
        }
    }
}

impl EntryOptions {
    /// The seed of one entry in this repeat.
    pub fn seed_for(&self, entry_id: &str) -> u32 {
        entry_seed(self.run_seed, entry_id, self.repeat)
    }

    /// The sampling settings of one entry.
    pub fn sampling_for(&self, entry_id: &str) -> Sampling {
        Sampling {
            seed: self.seed_for(entry_id),
            ..self.sampling
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryOutcome {
    pub id: String,
    pub category: String,
    pub mode: Mode,
    pub repeat: u32,
    /// The model's text, as generated (the first round's, in harness mode).
    pub reply: String,
    /// What the BFCL result file holds: the reply in prompt mode; in harness mode the
    /// scored calls written as a Python call list, which BFCL's decoder reads back;
    /// for a multi-turn entry one list per turn of such step replies.
    pub result: serde_json::Value,
    pub check: CheckResult,
    /// Set when the backend failed on this entry; it is then scored as BFCL scores an
    /// inference error (an undecodable reply).
    pub inference_error: Option<String>,
    pub prompt_tokens: u32,
    pub generated_tokens: u32,
    pub seconds: f64,
}

impl EntryOutcome {
    /// The line BFCL's own evaluator reads for this reply.
    pub fn result_line(&self) -> ResultLine {
        ResultLine {
            id: self.id.clone(),
            result: self.result.clone(),
            input_token_count: Some(self.prompt_tokens.into()),
            output_token_count: Some(self.generated_tokens.into()),
            latency: Some(self.seconds),
        }
    }
}

/// The result text BFCL's handlers write when inference fails.
pub fn inference_error_result(error: &anyhow::Error) -> String {
    format!("Error during inference: {error:#}")
}

/// Prompts the backend with each entry as BFCL's prompting handlers would, and checks each
/// reply, one after another. `on_entry` sees every outcome as it is made.
pub fn run_prompt_mode(
    backend: &mut dyn Backend,
    entries: &[Entry],
    options: &EntryOptions,
    on_entry: &mut dyn FnMut(&EntryOutcome),
) -> Vec<EntryOutcome> {
    let mut outcomes = Vec::with_capacity(entries.len());
    for entry in entries {
        let outcome = prompt_entry(backend, entry, options);
        on_entry(&outcome);
        outcomes.push(outcome);
    }
    outcomes
}

/// One entry in prompt mode: BFCL's prompt, the raw reply, its check.
pub fn prompt_entry(
    backend: &mut dyn Backend,
    entry: &Entry,
    options: &EntryOptions,
) -> EntryOutcome {
    let request = GenRequest::chat(
        backend.family(),
        &prompt::render_messages(entry),
        options.max_tokens,
        options.sampling_for(&entry.id),
    );
    let generation = request.and_then(|request| backend.generate(&request));
    let (reply, result, inference_error, metrics) = match generation {
        Ok(generation) => (
            generation.text.clone(),
            serde_json::Value::String(generation.text),
            None,
            generation.metrics,
        ),
        Err(error) => (
            String::new(),
            serde_json::Value::String(inference_error_result(&error)),
            Some(format!("{error:#}")),
            GenMetrics::default(),
        ),
    };
    let check = check_entry(entry, &result);
    EntryOutcome {
        id: entry.id.clone(),
        category: entry.category.clone(),
        mode: Mode::Prompt,
        repeat: options.repeat,
        reply,
        result,
        check,
        inference_error,
        prompt_tokens: metrics.prompt_tokens,
        generated_tokens: metrics.generated_tokens,
        seconds: metrics.prefill_secs + metrics.decode_secs,
    }
}
