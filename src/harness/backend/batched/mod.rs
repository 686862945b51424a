//! Many generations at once over one model and one context: continuous batching with
//! shared-prefix KV reuse.
//!
//! A dedicated thread owns the context and serves every client. Decode calls take turns: one
//! carries a token for every sequence that is generating, the next the prompt chunks of
//! sequences still prefilling, so a new request joins the batch without waiting for the others
//! to end. A new prompt starts from the longest cached prefix held by any sequence, copied from
//! that sequence's KV stream, so the shared system prompt and worked examples are computed once.
//! Each sequence has a stream of its own, so attention spans only its own context (decision 010).
//!
//! Determinism: a request's tokens depend on its prompt and seed, and on the floating-point
//! result of the batches it was computed in, so outputs can differ from a one-sequence backend's
//! in the last bits of the logits (see docs/throughput.md for how often that changes a
//! transcript). Forked handles take part in lockstep: the engine decodes only when every one of
//! them is waiting for an answer, and hands answers out one at a time, so that client code runs
//! in a fixed order. Batches then depend on the requests alone, not on thread timing, and a run
//! replays exactly at the same number of sequences.
//!
//! Here: the options, the engine's start and the handles clients hold. The loop that serves
//! them is in `serving`; `bare_loop` is the reference decode loop for benchmarks.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{anyhow, bail, Context as _};
use llama_cpp_2::context::params::LlamaContextParams;

use super::llama::{load_model, runtime, LlamaOptions, PREFILL_CHUNK};
use super::{Backend, BackendInfo, EngineStats, GenRequest, Generation};
use crate::harness::template::Family;
use serving::{Engine, Reuse};

mod bare_loop;
mod serving;

pub use bare_loop::bare_decode_rate;

#[derive(Debug, Clone)]
pub struct BatchedOptions {
    /// `n_ctx` is the context of one sequence, as for a one-sequence backend.
    pub llama: LlamaOptions,
    /// Sequences decoded together; clients beyond this wait for a free one.
    pub sequences: usize,
    /// Reuse cached prefixes only in whole 256-token chunks, computed as a fresh prefill
    /// computes them, so that reuse never changes a result. Off, any common prefix is reused,
    /// generated tokens included: far less prefill, at the price of results that depend on
    /// what was cached (as they already depend on what shared the batch).
    pub chunk_aligned_reuse: bool,
}

impl BatchedOptions {
    pub fn new(llama: LlamaOptions, sequences: usize) -> Self {
        BatchedOptions {
            llama,
            sequences: sequences.max(1),
            chunk_aligned_reuse: false,
        }
    }
}

/// What clients tell the engine.
enum Message {
    Job(Job),
    /// A lockstep client starts: the engine waits for its requests.
    Join(u64),
    /// A lockstep client is gone.
    Leave(u64),
}

struct Job {
    client: u64,
    request: GenRequest,
    received: Instant,
    reply: Sender<anyhow::Result<Generation>>,
}

struct Shared {
    family: Family,
    info: BackendInfo,
    next_client: AtomicU64,
    stats: Arc<Mutex<EngineStats>>,
}

/// The engine: owns the serving thread. Hand out [`BatchedHandle`]s to clients; the thread ends
/// when the engine and every handle are gone.
pub struct BatchedEngine {
    sender: Sender<Message>,
    shared: Arc<Shared>,
}

impl BatchedEngine {
    pub fn start(options: &BatchedOptions) -> anyhow::Result<Self> {
        validate(options)?;
        let loaded = load_model(&options.llama)?;
        let sequences = options.sequences.max(1);
        let seq_ctx = options.llama.n_ctx as usize;
        let n_batch = (PREFILL_CHUNK + sequences) as u32;
        let params = context_params(sequences, seq_ctx, loaded.info.threads);
        let model = loaded.model;
        let aligned = options.chunk_aligned_reuse;
        let prefix_cache = options.llama.prefix_cache;
        let path = options.llama.model_path.clone();
        let (job_sender, jobs) = mpsc::channel::<Message>();
        let (ready_sender, ready) = mpsc::channel::<anyhow::Result<u32>>();
        let mut info = loaded.info;
        info.name = "llama.cpp batched".into();
        info.n_ctx = seq_ctx as u32;
        info.sequences = sequences as u32;
        info.n_batch = n_batch;
        let stats = Arc::new(Mutex::new(EngineStats::default()));
        let thread_stats = Arc::clone(&stats);
        let started = Instant::now();
        std::thread::Builder::new()
            .name("skilleval-engine".into())
            .spawn(move || {
                // The context is not Send: it is made, used and dropped on this thread.
                let context = match runtime().and_then(|rt| {
                    model.new_context(rt, params).with_context(|| {
                        format!("{}: cannot create a llama.cpp context", path.display())
                    })
                }) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_sender.send(Err(e));
                        return;
                    }
                };
                let _ = ready_sender.send(Ok(context.n_ctx()));
                let reuse = Reuse {
                    enabled: prefix_cache,
                    chunk_aligned: aligned,
                };
                Engine::new(model, context, sequences, seq_ctx, thread_stats, reuse).serve(jobs);
            })
            .context("cannot start the engine thread")?;
        ready
            .recv()
            .map_err(|_| anyhow!("the engine thread ended while starting"))??;
        info.load_secs += started.elapsed().as_secs_f64();
        Ok(BatchedEngine {
            sender: job_sender,
            shared: Arc::new(Shared {
                family: loaded.family,
                info,
                next_client: AtomicU64::new(0),
                stats,
            }),
        })
    }

    /// A free-running client: served as its requests come, outside lockstep.
    pub fn handle(&self) -> BatchedHandle {
        BatchedHandle::new(self.sender.clone(), Arc::clone(&self.shared), false)
    }

    pub fn stats(&self) -> EngineStats {
        lock_stats(&self.shared.stats).clone()
    }
}

fn lock_stats(stats: &Mutex<EngineStats>) -> std::sync::MutexGuard<'_, EngineStats> {
    // Stats are plain counters: a panic elsewhere leaves them usable.
    stats.lock().unwrap_or_else(|e| e.into_inner())
}

/// A client's way in: `generate` queues the request and blocks until it is answered. Each handle
/// (and each clone) is a client of its own, so that its next prompt, which usually extends its
/// last, goes back to the sequence that holds the last one.
pub struct BatchedHandle {
    sender: Sender<Message>,
    shared: Arc<Shared>,
    client: u64,
    lockstep: bool,
}

impl BatchedHandle {
    fn new(sender: Sender<Message>, shared: Arc<Shared>, lockstep: bool) -> Self {
        let client = shared.next_client.fetch_add(1, Ordering::Relaxed);
        if lockstep {
            let _ = sender.send(Message::Join(client));
        }
        BatchedHandle {
            sender,
            shared,
            client,
            lockstep,
        }
    }

    pub fn stats(&self) -> EngineStats {
        lock_stats(&self.shared.stats).clone()
    }
}

impl Clone for BatchedHandle {
    fn clone(&self) -> Self {
        BatchedHandle::new(self.sender.clone(), Arc::clone(&self.shared), self.lockstep)
    }
}

impl Drop for BatchedHandle {
    fn drop(&mut self) {
        if self.lockstep {
            let _ = self.sender.send(Message::Leave(self.client));
        }
    }
}

impl Backend for BatchedHandle {
    fn family(&self) -> Family {
        self.shared.family
    }

    fn engine_stats(&self) -> Option<EngineStats> {
        Some(self.stats())
    }

    fn info(&self) -> BackendInfo {
        self.shared.info.clone()
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        let (reply, answer) = mpsc::channel();
        self.sender
            .send(Message::Job(Job {
                client: self.client,
                request: request.clone(),
                received: Instant::now(),
                reply,
            }))
            .map_err(|_| anyhow!("the batched engine has stopped"))?;
        answer
            .recv()
            .map_err(|_| anyhow!("the batched engine stopped during a generation"))?
    }

    /// Forks are lockstep clients: whoever runs work on several of them gets the same batches
    /// for the same work, whatever the threads' timing.
    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        Some(Box::new(BatchedHandle::new(
            self.sender.clone(),
            Arc::clone(&self.shared),
            true,
        )))
    }
}

/// The one context the engine decodes in. Every sequence may fill its own context; shared
/// prefixes only save cells.
fn context_params(sequences: usize, seq_ctx: usize, threads: u32) -> LlamaContextParams {
    let n_batch = (PREFILL_CHUNK + sequences) as u32;
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new((sequences * seq_ctx) as u32))
        .with_n_batch(n_batch)
        .with_n_ubatch(n_batch)
        .with_n_seq_max(sequences as u32)
        .with_n_threads(threads as i32)
        .with_n_threads_batch(threads as i32)
        // A KV stream per sequence: attention then spans the sequence's own cells, not every
        // sequence's (a shared pool made each prompt token pay for the whole pool).
        .with_kv_unified(false)
        // A full sliding-window cache keeps partial removal exact (Gemma 3 uses a 512 window).
        .with_swa_full(true)
}

/// Checks that options make sense before a model loads.
pub fn validate(options: &BatchedOptions) -> anyhow::Result<()> {
    if options.sequences == 0 {
        bail!("the engine needs at least one sequence");
    }
    if (options.llama.n_ctx as usize) <= PREFILL_CHUNK {
        bail!(
            "a context of {} tokens per sequence is too small; give more than {PREFILL_CHUNK}",
            options.llama.n_ctx
        );
    }
    Ok(())
}
