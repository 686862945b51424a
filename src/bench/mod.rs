//! BFCL-style function-calling benchmark: vendored corpora, BFCL's prompting-mode prompt,
//! its AST checker, and result files in its format.

pub mod checker;
pub mod corpus;
pub mod prompt;
pub mod score;

use serde::{Deserialize, Serialize};

use crate::harness::backend::{Backend, GenRequest, Sampling};
use crate::harness::template::render;

use checker::CheckResult;
use corpus::Entry;
use score::{check_entry, ResultLine};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    pub max_tokens: u32,
    /// Greedy by default; set a temperature and seed for sampled runs.
    pub sampling: Sampling,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_tokens: 256,
            sampling: Sampling::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryOutcome {
    pub id: String,
    pub category: String,
    pub reply: String,
    pub check: CheckResult,
    pub prompt_tokens: u32,
    pub generated_tokens: u32,
    pub seconds: f64,
}

impl EntryOutcome {
    /// The line BFCL's own evaluator reads for this reply.
    pub fn result_line(&self) -> ResultLine {
        ResultLine {
            id: self.id.clone(),
            result: serde_json::Value::String(self.reply.clone()),
            input_token_count: Some(self.prompt_tokens.into()),
            output_token_count: Some(self.generated_tokens.into()),
            latency: Some(self.seconds),
        }
    }
}

/// Prompts the backend with each entry as BFCL's prompting handlers would, and checks each
/// reply. `on_entry` sees every outcome as it is made (for progress output).
pub fn run_prompt_mode(
    backend: &mut dyn Backend,
    entries: &[Entry],
    options: &RunOptions,
    on_entry: &mut dyn FnMut(&EntryOutcome),
) -> anyhow::Result<Vec<EntryOutcome>> {
    let family = backend.family();
    let stop: Vec<String> = family.end_of_turn().iter().map(|s| s.to_string()).collect();
    let mut outcomes = Vec::with_capacity(entries.len());
    for entry in entries {
        let messages = prompt::render_messages(entry);
        let request = GenRequest {
            prompt: render(family, &messages),
            max_tokens: options.max_tokens,
            stop: stop.clone(),
            sampling: options.sampling,
        };
        let generation = backend.generate(&request)?;
        let reply = generation.text;
        let check = check_entry(entry, &serde_json::Value::String(reply.clone()));
        let metrics = generation.metrics;
        let outcome = EntryOutcome {
            id: entry.id.clone(),
            category: entry.category.clone(),
            reply,
            check,
            prompt_tokens: metrics.prompt_tokens,
            generated_tokens: metrics.generated_tokens,
            seconds: metrics.prefill_secs + metrics.decode_secs,
        };
        on_entry(&outcome);
        outcomes.push(outcome);
    }
    Ok(outcomes)
}
