//! Opening a GGUF model for a run: one sequence at a time, or the batched engine when units run
//! at once.

use super::batched::{BatchedEngine, BatchedHandle, BatchedOptions};
use super::llama::{LlamaBackend, LlamaOptions};
use super::Backend;

/// A loaded model, ready for a run at the chosen `--parallel`.
pub enum OpenModel {
    Single(LlamaBackend),
    Batched {
        handle: BatchedHandle,
        /// Kept for the run's length, as the owner of the serving thread.
        _engine: BatchedEngine,
    },
}

/// The one-sequence backend for `parallel` 1, else the batched engine with that many
/// sequences.
pub fn open(options: &LlamaOptions, parallel: usize) -> anyhow::Result<OpenModel> {
    Ok(if parallel > 1 {
        let engine = BatchedEngine::start(&BatchedOptions::new(options.clone(), parallel))?;
        OpenModel::Batched {
            handle: engine.handle(),
            _engine: engine,
        }
    } else {
        OpenModel::Single(LlamaBackend::load(options)?)
    })
}

impl OpenModel {
    pub fn backend(&mut self) -> &mut dyn Backend {
        match self {
            OpenModel::Single(backend) => backend,
            OpenModel::Batched { handle, .. } => handle,
        }
    }
}
