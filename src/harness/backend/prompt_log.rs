//! `run --prompt-log FILE`: every request a run sends to its model, one JSON line each, with the
//! reply it got. It shows what the model saw, and lets another server be fed the very same
//! prompts (`scripts/server_peer.py`). Each handle is one client: the run's workers are forks,
//! numbered from 1 in the order they were forked, and a client's lines come in the order it sent
//! them, so a replay can keep each worker's requests in sequence.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use serde_json::json;

use super::{
    Backend, BackendInfo, ChatRound, ContinuationScore, EngineStats, GenRequest, Generation,
    LendsBackend, ScoreRequest,
};
use crate::harness::template::Family;

/// The file the lines go to, shared by every handle, and the next client number.
struct Sink {
    out: Mutex<BufWriter<File>>,
    forks: AtomicUsize,
}

/// A backend whose requests are written to a prompt log as they are answered.
pub struct PromptLog<B> {
    inner: B,
    client: usize,
    sink: Arc<Sink>,
}

impl<B> PromptLog<B> {
    /// One line for `request` and its reply.
    fn write_line(
        &self,
        request: &GenRequest,
        generation: &Generation,
        chat_api: bool,
    ) -> anyhow::Result<()> {
        let s = &request.sampling;
        let mut line = json!({
            "client": self.client,
            "prompt": request.prompt,
            "max_tokens": request.max_tokens,
            "stop": request.stop,
            "temperature": s.temperature,
            "top_k": s.top_k,
            "top_p": s.top_p,
            "seed": s.seed,
            "reply": generation.text,
            "generated_tokens": generation.metrics.generated_tokens,
        });
        if let Some(grammar) = &request.grammar {
            line["grammar"] = json!(grammar.gbnf);
            line["grammar_trigger"] = json!(grammar.trigger);
        }
        if chat_api {
            line["chat"] = json!(true);
        }
        let mut out = self.sink.out.lock().expect("prompt log lock");
        writeln!(out, "{line}").context("--prompt-log: writing the file")
    }

    /// Logs `inner`'s requests to a new file at `path` (an existing one is replaced).
    pub fn create(inner: B, path: &Path) -> anyhow::Result<Self> {
        let file =
            File::create(path).with_context(|| format!("--prompt-log {}", path.display()))?;
        Ok(PromptLog {
            inner,
            client: 0,
            sink: Arc::new(Sink {
                out: Mutex::new(BufWriter::new(file)),
                forks: AtomicUsize::new(1),
            }),
        })
    }

    /// Writes what is still buffered; a failed write is an error here rather than lost.
    pub fn flush(&self) -> anyhow::Result<()> {
        let mut out = self.sink.out.lock().expect("prompt log lock");
        out.flush().context("--prompt-log: writing the file")
    }
}

impl<B: LendsBackend> Backend for PromptLog<B> {
    fn family(&self) -> Family {
        self.inner.backend().family()
    }

    fn info(&self) -> BackendInfo {
        self.inner.backend().info()
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        let generation = self.inner.backend_mut().generate(request)?;
        self.write_line(request, &generation, false)?;
        Ok(generation)
    }

    /// Logged as a generation; `chat` marks that the server rendered the prompt itself from
    /// the round's messages, so `prompt` is skilleval's rendering, not what the model read.
    fn generate_chat(
        &mut self,
        request: &GenRequest,
        chat: &ChatRound,
    ) -> anyhow::Result<Generation> {
        let generation = self.inner.backend_mut().generate_chat(request, chat)?;
        let chat_api = self.inner.backend().info().server_api.as_deref() == Some("chat");
        self.write_line(request, &generation, chat_api)?;
        Ok(generation)
    }

    fn score(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        self.inner.backend_mut().score(request)
    }

    fn engine_stats(&self) -> Option<EngineStats> {
        self.inner.backend().engine_stats()
    }

    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        let inner = self.inner.backend().fork()?;
        Some(Box::new(PromptLog {
            inner,
            client: self.sink.forks.fetch_add(1, Ordering::Relaxed),
            sink: Arc::clone(&self.sink),
        }))
    }
}
