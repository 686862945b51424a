//! The engine's serving loop: admission with prefix reuse, the decode calls that take turns
//! between prompt and generated tokens, sampling, and answers in lockstep order. It runs on the
//! engine thread, which owns the context.

use std::collections::{BTreeSet, VecDeque};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::anyhow;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::super::llama::{first_stop, TokenSampler, PREFILL_CHUNK};
use super::super::{EngineStats, FinishReason, GenMetrics, Generation};
use super::{lock_stats, Job, Message};

/// One request being served.
struct Active {
    job: Job,
    tokens: Vec<LlamaToken>,
    /// Next prompt position to compute; `tokens.len()` once generating.
    next: usize,
    reused: usize,
    sampler: TokenSampler,
    budget: usize,
    generated: u32,
    /// The last sampled token, fed in the next decode call.
    pending: Option<LlamaToken>,
    output: Vec<LlamaToken>,
    bytes: Vec<u8>,
    /// Where this sequence's logits sit in the batch just decoded.
    logits_at: Option<i32>,
    admitted: Instant,
    prompt_done: Option<Instant>,
    first_token: Option<Instant>,
    /// Admission order: prefill goes first come, first served.
    order: u64,
}

struct Slot {
    /// Tokens whose KV entries this sequence holds and may lend, from position 0.
    cached: Vec<LlamaToken>,
    last_client: Option<u64>,
    last_used: u64,
    active: Option<Active>,
}

pub(super) struct Engine {
    model: &'static LlamaModel,
    context: LlamaContext<'static>,
    slots: Vec<Slot>,
    seq_ctx: usize,
    queue: VecDeque<(Job, Vec<LlamaToken>)>,
    /// Requests received since the last decode call, admitted in client order.
    arrivals: Vec<Job>,
    /// Lockstep clients, and those of them running their own code (not waiting for an answer).
    members: BTreeSet<u64>,
    running: BTreeSet<u64>,
    /// Answers for lockstep clients, handed out one at a time.
    outbox: VecDeque<(
        u64,
        Sender<anyhow::Result<Generation>>,
        anyhow::Result<Generation>,
    )>,
    batch: LlamaBatch<'static>,
    /// Reused prefixes end on a multiple of this (1: anywhere).
    align: usize,
    /// Off, every prompt is computed from scratch.
    prefix_cache: bool,
    /// Whether the last decode call carried prompt tokens.
    last_call_prefilled: bool,
    tick: u64,
    stats: Arc<Mutex<EngineStats>>,
}

/// How cached prefixes may be reused (see `BatchedOptions`).
pub(super) struct Reuse {
    pub enabled: bool,
    pub chunk_aligned: bool,
}

/// One decode call as assembled.
#[derive(Default)]
struct DecodeCall {
    /// The sequences in the call, each with the prompt tokens it added (0 when generating).
    added: Vec<(usize, usize)>,
    /// Sequences holding a filler token, each with the position it took.
    fillers: Vec<(usize, usize)>,
    prefill_tokens: usize,
    sequences: u32,
    /// The last error met while filling the batch.
    failed: Option<String>,
}

/// Fewer reusable tokens than this are not worth holding a request back for.
const MIN_WORTH_WAITING: usize = 32;

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Engine {
    pub(super) fn new(
        model: &'static LlamaModel,
        context: LlamaContext<'static>,
        sequences: usize,
        seq_ctx: usize,
        stats: Arc<Mutex<EngineStats>>,
        reuse: Reuse,
    ) -> Self {
        Engine {
            model,
            context,
            slots: (0..sequences)
                .map(|_| Slot {
                    cached: Vec::new(),
                    last_client: None,
                    last_used: 0,
                    active: None,
                })
                .collect(),
            seq_ctx,
            queue: VecDeque::new(),
            arrivals: Vec::new(),
            members: BTreeSet::new(),
            running: BTreeSet::new(),
            outbox: VecDeque::new(),
            batch: LlamaBatch::new(PREFILL_CHUNK + sequences, 1),
            align: if reuse.chunk_aligned {
                PREFILL_CHUNK
            } else {
                1
            },
            prefix_cache: reuse.enabled,
            last_call_prefilled: false,
            tick: 0,
            stats,
        }
    }

    pub(super) fn serve(&mut self, messages: Receiver<Message>) {
        loop {
            // A lockstep client gets its answer only when no other one is running: client code
            // then runs in the order of the answers, which the batches alone decide.
            if self.running.is_empty() {
                if let Some((client, reply, answer)) = self.outbox.pop_front() {
                    if self.members.contains(&client) {
                        self.running.insert(client);
                    }
                    let _ = reply.send(answer);
                    continue;
                }
            }
            let busy = self.slots.iter().any(|s| s.active.is_some()) || !self.queue.is_empty();
            if !self.running.is_empty() || (!busy && self.arrivals.is_empty()) {
                let waiting_for_clients = !self.running.is_empty();
                let started = Instant::now();
                match messages.recv() {
                    Ok(message) => self.on_message(message),
                    Err(_) => return,
                }
                if waiting_for_clients {
                    lock_stats(&self.stats).client_wait_secs += started.elapsed().as_secs_f64();
                }
            }
            while let Ok(message) = messages.try_recv() {
                self.on_message(message);
            }
            if !self.running.is_empty() || !self.outbox.is_empty() {
                continue;
            }
            let mut arrivals = std::mem::take(&mut self.arrivals);
            arrivals.sort_by_key(|job| job.client);
            let started = Instant::now();
            for job in arrivals {
                self.receive(job);
            }
            lock_stats(&self.stats).tokenize_secs += started.elapsed().as_secs_f64();
            self.admit();
            if self.slots.iter().any(|s| s.active.is_some()) {
                self.step();
            }
        }
    }

    fn on_message(&mut self, message: Message) {
        match message {
            Message::Job(job) => {
                self.running.remove(&job.client);
                self.arrivals.push(job);
            }
            Message::Join(client) => {
                self.members.insert(client);
                self.running.insert(client);
            }
            Message::Leave(client) => {
                self.members.remove(&client);
                self.running.remove(&client);
            }
        }
    }

    /// Sends an answer: at once to a free-running client, through the outbox to a lockstep one.
    fn answer(&mut self, job: Job, answer: anyhow::Result<Generation>) {
        if self.members.contains(&job.client) {
            self.outbox.push_back((job.client, job.reply, answer));
        } else {
            let _ = job.reply.send(answer);
        }
    }

    /// Tokenizes a request and queues it, or answers at once when it cannot be served.
    fn receive(&mut self, job: Job) {
        let tokens =
            crate::harness::backend::llama::prompt_tokens(&self.model.vocab(), &job.request);
        if tokens.is_empty() {
            self.answer(job, Err(anyhow!("the prompt is empty")));
        } else if tokens.len() + 1 >= self.seq_ctx {
            let message = format!(
                "the prompt has {} tokens, more than the context of {} holds",
                tokens.len(),
                self.seq_ctx
            );
            self.answer(job, Err(anyhow!(message)));
        } else {
            self.queue.push_back((job, tokens));
        }
    }

    /// How much of `tokens` may start from a cached prefix `common` tokens long: the last prompt
    /// token is always computed (its logits start the generation), and the cut falls on the
    /// alignment.
    fn reusable(&self, common: usize, tokens: &[LlamaToken]) -> usize {
        if !self.prefix_cache {
            return 0;
        }
        (common.min(tokens.len() - 1) / self.align) * self.align
    }

    /// True when a sequence still prefilling will soon hold a longer prefix of `tokens` than any
    /// cache holds now: starting later then saves computing that prefix twice.
    fn worth_waiting(&self, tokens: &[LlamaToken]) -> bool {
        let cached = self
            .slots
            .iter()
            .map(|s| common_prefix(&s.cached, tokens))
            .max()
            .unwrap_or(0);
        let coming = self
            .slots
            .iter()
            .filter_map(|s| s.active.as_ref())
            .filter(|a| a.next < a.tokens.len())
            .map(|a| common_prefix(&a.tokens, tokens))
            .max()
            .unwrap_or(0);
        self.reusable(coming, tokens) >= self.reusable(cached, tokens) + MIN_WORTH_WAITING
    }

    /// Moves queued requests into free sequences, each starting from the best cached prefix.
    /// Requests worth holding back keep their place in the queue.
    fn admit(&mut self) {
        let mut held = VecDeque::new();
        while self.slots.iter().any(|s| s.active.is_none()) {
            let Some((job, tokens)) = self.queue.pop_front() else {
                break;
            };
            if self.worth_waiting(&tokens) {
                held.push_back((job, tokens));
            } else {
                self.start(job, tokens);
            }
        }
        while let Some(queued) = held.pop_back() {
            self.queue.push_front(queued);
        }
    }

    fn start(&mut self, job: Job, tokens: Vec<LlamaToken>) {
        let sampler = match TokenSampler::new(
            self.model,
            &job.request.sampling,
            job.request.grammar.as_ref(),
        ) {
            Ok(sampler) => sampler,
            Err(e) => {
                self.answer(job, Err(e));
                return;
            }
        };
        let target = self.pick_slot(job.client, &tokens);
        // The longest exact prefix any sequence holds; the target's own wins ties (no copy).
        let (mut source, mut common) = (target, common_prefix(&self.slots[target].cached, &tokens));
        for (i, slot) in self.slots.iter().enumerate() {
            let c = common_prefix(&slot.cached, &tokens);
            if c > common {
                (source, common) = (i, c);
            }
        }
        let keep = self.reusable(common, &tokens);
        let seq = target as i32;
        let reset = if source == target {
            self.context
                .clear_kv_cache_seq(Some(target as u32), Some(keep as u32), None)
                .map(|_| ())
        } else {
            self.context
                .clear_kv_cache_seq(Some(target as u32), None, None)
                .map(|_| ())
                .and_then(|_| {
                    if keep == 0 {
                        return Ok(());
                    }
                    // Across KV streams llama.cpp copies whole streams only: copy, then cut.
                    lock_stats(&self.stats).stream_copies += 1;
                    self.context
                        .kv_cache_seq_cp(source as i32, seq, None, None)
                        .and_then(|_| {
                            self.context
                                .clear_kv_cache_seq(Some(target as u32), Some(keep as u32), None)
                                .map(|_| ())
                        })
                })
        };
        if let Err(e) = reset {
            self.answer(job, Err(anyhow!("cache reuse failed: {e}")));
            self.slots[target].cached.clear();
            return;
        }
        self.slots[target].cached = tokens[..keep].to_vec();
        let budget = (job.request.max_tokens as usize).min(self.seq_ctx - tokens.len() - 1);
        {
            let mut stats = lock_stats(&self.stats);
            stats.requests += 1;
            stats.prompt_tokens += tokens.len() as u64;
            stats.cached_prompt_tokens += keep as u64;
            stats.prefix_hits += u64::from(keep > 0);
        }
        self.tick += 1;
        let slot = &mut self.slots[target];
        slot.last_client = Some(job.client);
        slot.last_used = self.tick;
        slot.active = Some(Active {
            sampler,
            job,
            next: keep,
            reused: keep,
            tokens,
            budget,
            generated: 0,
            pending: None,
            output: Vec::new(),
            bytes: Vec::new(),
            logits_at: None,
            admitted: Instant::now(),
            prompt_done: None,
            first_token: None,
            order: self.tick,
        });
        if budget == 0 {
            self.finish(target, FinishReason::MaxTokens, String::new());
        }
    }

    /// A free sequence for `client`: the one it used last, else the one whose cache shares the
    /// most with the prompt, else the least recently used.
    fn pick_slot(&self, client: u64, tokens: &[LlamaToken]) -> usize {
        let free = || {
            self.slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.active.is_none())
        };
        if let Some((i, _)) = free().find(|(_, s)| s.last_client == Some(client)) {
            return i;
        }
        free()
            .max_by_key(|(_, s)| (common_prefix(&s.cached, tokens), u64::MAX - s.last_used))
            .map(|(i, _)| i)
            .expect("a free sequence")
    }

    /// One decode call: either a token for each generating sequence, or prompt chunks of
    /// prefilling sequences, oldest first, until the call is full.
    fn step(&mut self) {
        let order = self.admission_order();
        let prefill_call = self.prompt_turn(&order);
        self.last_call_prefilled = prefill_call;
        self.batch.clear();
        for &i in &order {
            self.slots[i].active.as_mut().expect("active").logits_at = None;
        }
        let call = if prefill_call {
            self.add_prompt_chunks(&order)
        } else {
            self.add_generated_tokens(&order)
        };
        if let Some(e) = &call.failed {
            self.fail(&order, &format!("batch assembly failed: {e}"));
            return;
        }
        if let Err(e) = self.decode(&call) {
            let slots: Vec<usize> = call.added.iter().map(|&(i, _)| i).collect();
            self.fail(&slots, &format!("decode failed: {e}"));
            return;
        }
        self.advance(&call.added);
    }

    /// The sequences being served, first admitted first.
    fn admission_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].active.is_some())
            .collect();
        order.sort_by_key(|&i| self.slots[i].active.as_ref().map(|a| a.order));
        order
    }

    /// Whether this call carries prompt tokens. Prompt tokens and generated tokens go in
    /// separate calls, taking turns (decision 006): with a stream per sequence llama.cpp splits
    /// a mixed call anyway, into equal shares of tokens per sequence, one token of each first,
    /// then the rest of the prompts.
    fn prompt_turn(&self, order: &[usize]) -> bool {
        let active = || order.iter().filter_map(|&i| self.slots[i].active.as_ref());
        let generating = active().any(|a| a.pending.is_some());
        let prefilling = active().any(|a| a.next < a.tokens.len());
        prefilling && (!generating || !self.last_call_prefilled)
    }

    /// Puts each generating sequence's pending token in the batch. Each sequence has a KV
    /// stream of its own, and llama.cpp computes a call in runs of consecutive sequences
    /// (decision 010): generated tokens go in in sequence order, and a sequence between two
    /// generating ones gets a filler token, dropped after the call, so that the call stays one
    /// run.
    fn add_generated_tokens(&mut self, order: &[usize]) -> DecodeCall {
        let mut call = DecodeCall::default();
        let generating_slots: Vec<usize> = (0..self.slots.len())
            .filter(|&i| {
                self.slots[i]
                    .active
                    .as_ref()
                    .is_some_and(|a| a.pending.is_some())
            })
            .collect();
        if let (Some(&first), Some(&last)) = (generating_slots.first(), generating_slots.last()) {
            let filler = self.slots[first]
                .active
                .as_ref()
                .and_then(|a| a.pending)
                .expect("a generating sequence");
            for i in first..=last {
                let slot = &mut self.slots[i];
                let seq = [i as i32];
                let added_token = match slot.active.as_mut() {
                    Some(active) if active.pending.is_some() => {
                        let pos = active.tokens.len() + active.generated as usize - 1;
                        active.logits_at = Some(self.batch.n_tokens());
                        call.sequences += 1;
                        self.batch
                            .add(active.pending.expect("pending"), pos as i32, &seq, true)
                    }
                    held => {
                        // The stream holds positions 0..end: the filler takes the next one.
                        let end = held.map_or(slot.cached.len(), |a| a.next);
                        call.fillers.push((i, end));
                        self.batch.add(filler, end as i32, &seq, false)
                    }
                };
                if let Err(e) = added_token {
                    call.failed = Some(e.to_string());
                }
            }
        }
        for &i in order {
            if self.slots[i]
                .active
                .as_ref()
                .is_some_and(|a| a.pending.is_some())
            {
                call.added.push((i, 0));
            }
        }
        call
    }

    /// Puts prompt chunks of the prefilling sequences in the batch, oldest first, until the
    /// call is full.
    fn add_prompt_chunks(&mut self, order: &[usize]) -> DecodeCall {
        let mut call = DecodeCall::default();
        let mut room = PREFILL_CHUNK;
        for &i in order {
            let active = self.slots[i].active.as_mut().expect("active");
            if active.next >= active.tokens.len() {
                continue;
            }
            let mut end =
                ((active.next / PREFILL_CHUNK + 1) * PREFILL_CHUNK).min(active.tokens.len());
            if end - active.next > room {
                // Aligned reuse needs whole chunks; otherwise the chunk is split to fill the call.
                if self.align > 1 || room == 0 {
                    break;
                }
                end = active.next + room;
            }
            let n = end - active.next;
            for at in active.next..end {
                let last = at + 1 == active.tokens.len();
                if last {
                    active.logits_at = Some(self.batch.n_tokens());
                }
                if let Err(e) = self
                    .batch
                    .add(active.tokens[at], at as i32, &[i as i32], last)
                {
                    call.failed = Some(e.to_string());
                }
            }
            room -= n;
            call.prefill_tokens += n;
            call.sequences += 1;
            call.added.push((i, n));
        }
        call
    }

    /// Runs the assembled call, drops its filler tokens, and counts it in the stats.
    fn decode(&mut self, call: &DecodeCall) -> Result<(), llama_cpp_2::DecodeError> {
        let started = Instant::now();
        let decoded = self.context.decode(&mut self.batch);
        let secs = started.elapsed().as_secs_f64();
        for &(i, end) in &call.fillers {
            let _ = self
                .context
                .clear_kv_cache_seq(Some(i as u32), Some(end as u32), None);
        }
        let mut stats = lock_stats(&self.stats);
        stats.decode_calls += 1;
        stats.batched_tokens += self.batch.n_tokens() as u64;
        stats.filler_tokens += call.fillers.len() as u64;
        if call.prefill_tokens > 0 {
            stats.prefill_secs += secs;
            stats.prefill_call_tokens += call.prefill_tokens as u64;
        } else {
            stats.decode_secs += secs;
            stats.decode_only_tokens +=
                (self.batch.n_tokens() as usize - call.fillers.len()) as u64;
        }
        stats.peak_sequences = stats.peak_sequences.max(call.sequences);
        decoded
    }

    /// After a decoded call: prompts move on by the tokens computed (the cache keeps them),
    /// and every sequence whose logits the call gave samples its next token.
    fn advance(&mut self, added: &[(usize, usize)]) {
        let now = Instant::now();
        for &(i, n) in added {
            let slot = &mut self.slots[i];
            let active = slot.active.as_mut().expect("active");
            if n > 0 {
                let from = active.next;
                active.next += n;
                // With aligned reuse only whole chunks count: a partial one is recomputed.
                if self.align == 1 || active.next.is_multiple_of(PREFILL_CHUNK) {
                    slot.cached
                        .extend_from_slice(&active.tokens[from..active.next]);
                }
                if active.next < active.tokens.len() {
                    continue;
                }
                active.prompt_done = Some(now);
            }
            self.sample(i);
        }
        lock_stats(&self.stats).sample_secs += now.elapsed().as_secs_f64();
    }

    fn sample(&mut self, i: usize) {
        let vocab = self.model.vocab();
        let active = self.slots[i].active.as_mut().expect("active");
        let Some(at) = active.logits_at else {
            return;
        };
        let token = active.sampler.sample(&self.context, at);
        active.generated += 1;
        active.output.push(token);
        if active.first_token.is_none() {
            active.first_token = Some(Instant::now());
        }
        if vocab.is_eog(token) {
            // The reply is what came before the end token: an instruct model ends every turn so.
            let text = String::from_utf8_lossy(&active.bytes).into_owned();
            self.finish(i, FinishReason::Eos, text);
            return;
        }
        active
            .bytes
            .extend_from_slice(&vocab.token_to_piece(token, false, None));
        let mut text = String::from_utf8_lossy(&active.bytes).into_owned();
        if let Some((at, stop)) = first_stop(&text, &active.job.request.stop) {
            text.truncate(at);
            self.finish(i, FinishReason::Stop(stop), text);
            return;
        }
        if active.generated as usize >= active.budget {
            self.finish(i, FinishReason::MaxTokens, text);
            return;
        }
        active.pending = Some(token);
    }

    /// Answers the request and frees its sequence, keeping what it computed as a cache.
    fn finish(&mut self, i: usize, finish: FinishReason, text: String) {
        let slot = &mut self.slots[i];
        let Some(active) = slot.active.take() else {
            return;
        };
        if self.align == 1 {
            // Every generated token but the last was decoded; the next round's prompt usually
            // repeats them.
            slot.cached = active.tokens[..active.next].to_vec();
            if active.next == active.tokens.len() {
                let decoded = active.output.len().saturating_sub(1);
                slot.cached.extend_from_slice(&active.output[..decoded]);
            }
        }
        // Anything else (generated tokens under aligned reuse) only holds cells.
        let _ =
            self.context
                .clear_kv_cache_seq(Some(i as u32), Some(slot.cached.len() as u32), None);
        let now = Instant::now();
        let prompt_done = active.prompt_done.unwrap_or(now);
        let metrics = GenMetrics {
            prompt_tokens: active.tokens.len() as u32,
            cached_prompt_tokens: active.reused as u32,
            generated_tokens: active.generated,
            prefill_secs: (prompt_done - active.admitted).as_secs_f64(),
            decode_secs: (now - prompt_done).as_secs_f64(),
            ttft_secs: active
                .first_token
                .map(|t| (t - active.job.received).as_secs_f64())
                .unwrap_or(0.0),
        };
        lock_stats(&self.stats).generated_tokens += u64::from(active.generated);
        self.answer(
            active.job,
            Ok(Generation {
                text,
                finish,
                metrics,
            }),
        );
    }

    /// Ends the given requests with an error and drops what their sequences held.
    fn fail(&mut self, slots: &[usize], message: &str) {
        for &i in slots {
            let slot = &mut self.slots[i];
            let taken = slot.active.take();
            slot.cached.clear();
            let _ = self.context.clear_kv_cache_seq(Some(i as u32), None, None);
            if let Some(active) = taken {
                self.answer(active.job, Err(anyhow!("{message}")));
            }
        }
    }
}
