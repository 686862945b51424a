//! Opening the model for a run: a GGUF file, one sequence at a time or the batched engine when
//! units run at once, or a model behind an OpenAI-compatible server.

use super::batched::{BatchedEngine, BatchedHandle, BatchedOptions};
use super::llama::{LlamaBackend, LlamaOptions};
use super::openai::{OpenAiBackend, OpenAiOptions};
use super::Backend;

/// A loaded model, ready for a run at the chosen `--parallel`.
pub enum OpenModel {
    Single(LlamaBackend),
    Batched {
        handle: BatchedHandle,
        /// Kept for the run's length, as the owner of the serving thread.
        _engine: BatchedEngine,
    },
    /// A server's model: every fork is another connection, so units run at once as requests.
    Server(OpenAiBackend),
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

/// The batched engine with `sequences` sequences whose cached prefixes are reused only in
/// whole chunks, so that a prompt and a seed give the same tokens whatever was cached before:
/// what draws that two arms must share need.
pub fn open_reproducible(options: &LlamaOptions, sequences: usize) -> anyhow::Result<OpenModel> {
    let engine = BatchedEngine::start(&BatchedOptions {
        chunk_aligned_reuse: true,
        ..BatchedOptions::new(options.clone(), sequences)
    })?;
    Ok(OpenModel::Batched {
        handle: engine.handle(),
        _engine: engine,
    })
}

/// The model an OpenAI-compatible server serves; nothing is loaded here.
pub fn connect(options: &OpenAiOptions) -> anyhow::Result<OpenModel> {
    Ok(OpenModel::Server(OpenAiBackend::connect(options)?))
}

impl OpenModel {
    pub fn backend(&mut self) -> &mut dyn Backend {
        match self {
            OpenModel::Single(backend) => backend,
            OpenModel::Batched { handle, .. } => handle,
            OpenModel::Server(backend) => backend,
        }
    }
}
