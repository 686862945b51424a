//! Many continuations scored at once, in an arrangement fixed by the requests alone: the
//! prefix every request shares is computed once and copied to every lane (a KV stream each),
//! then the requests' own tails and steps are decoded together, an equal share of tokens per
//! lane in each call. A request that extends the one before it (a sample's next round) goes on
//! the same lane and starts from what that one left. Nothing depends on timing or on what was
//! scored before, so the same requests give the same bits every time (an A/A reads exactly ×1).

use std::num::NonZeroU32;
use std::time::Instant;

use anyhow::{anyhow, Context as _};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::score_read::{sampler_distribution, score_tokens, token_scores, Distribution};
use super::{ContinuationScore, ScoreBatch, ScoreRequest};
use llama_cpp_2::llama_backend::LlamaBackend as LlamaRuntime;

/// Lanes decoded together.
pub const SCORE_LANES: usize = 16;
/// Most tokens in one decode call; a call gives each lane an equal share of it.
pub const SCORE_CALL_TOKENS: usize = 512;

/// A scoring context with [`SCORE_LANES`] streams, made when first needed and made again
/// larger when a request needs more room.
pub(crate) struct BatchScorer {
    context: LlamaContext<'static>,
    /// Cells of one lane's stream.
    lane_ctx: usize,
}

/// One request as tokens: what its lane must hold, and where its logits begin.
struct Job {
    index: usize,
    prompt_len: usize,
    continuation: Vec<LlamaToken>,
    /// The prompt and the continuation but its last token: the logits at positions
    /// `prompt_len - 1 ..` give each continuation token's distribution.
    tokens: Vec<LlamaToken>,
}

/// A lane's state: the tokens its stream holds, and the request it is computing.
struct Lane {
    held: Vec<LlamaToken>,
    /// (job, next position to compute, where it started).
    current: Option<(usize, usize, usize)>,
    /// The jobs still to come on this lane (a family: each extends the one before it).
    queue: std::collections::VecDeque<usize>,
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The context params of a scoring context whose lanes hold `lane_ctx` cells each.
fn params(lane_ctx: usize, threads: u32) -> LlamaContextParams {
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new((SCORE_LANES * lane_ctx) as u32))
        .with_n_batch(SCORE_CALL_TOKENS as u32)
        .with_n_ubatch(SCORE_CALL_TOKENS as u32)
        .with_n_seq_max(SCORE_LANES as u32)
        .with_n_threads(threads as i32)
        .with_n_threads_batch(threads as i32)
        // A stream per lane: attention spans a lane's own cells (decision 010).
        .with_kv_unified(false)
        // A full sliding-window cache keeps partial removal exact (Gemma 3 uses a 512 window).
        .with_swa_full(true)
}

impl BatchScorer {
    /// Scores `requests` on the scorer in `slot`, made (or made larger) first when their
    /// tokens need it: each answer as a one-sequence score would give it but for the last bits
    /// of the logits (other batches), in order. `n_ctx` is the context one request may fill.
    pub(crate) fn score_in(
        slot: &mut Option<BatchScorer>,
        rt: &LlamaRuntime,
        model: &'static LlamaModel,
        threads: u32,
        requests: &[ScoreRequest],
        n_ctx: usize,
    ) -> ScoreBatch {
        let started = Instant::now();
        let vocab = model.vocab();
        let mut answers: Vec<Option<anyhow::Result<ContinuationScore>>> =
            (0..requests.len()).map(|_| None).collect();
        let mut jobs = Vec::new();
        for (index, request) in requests.iter().enumerate() {
            match score_tokens(&vocab, request, n_ctx) {
                Ok((prompt, continuation)) => {
                    let mut tokens = prompt.clone();
                    tokens.extend_from_slice(&continuation[..continuation.len() - 1]);
                    jobs.push(Job {
                        index,
                        prompt_len: prompt.len(),
                        continuation,
                        tokens,
                    })
                }
                Err(e) => answers[index] = Some(Err(e)),
            }
        }
        let mut computed = 0u64;
        if !jobs.is_empty() {
            let needed = jobs.iter().map(|j| j.tokens.len() + 1).max().unwrap_or(1);
            let outcome = BatchScorer::at_least(slot.take(), rt, model, needed, threads)
                .and_then(|scorer| slot.insert(scorer).compute(&jobs, requests));
            match outcome {
                Ok((distributions, kept, tokens)) => {
                    computed = tokens;
                    let share = started.elapsed().as_secs_f64() / jobs.len() as f64;
                    for (j, job) in jobs.iter().enumerate() {
                        answers[job.index] = Some(Ok(ContinuationScore {
                            tokens: token_scores(&vocab, &job.continuation, &distributions[j]),
                            prompt_tokens: job.prompt_len as u32,
                            cached_prompt_tokens: kept[j] as u32,
                            secs: share,
                        }));
                    }
                }
                Err(e) => {
                    for job in &jobs {
                        answers[job.index] = Some(Err(anyhow!("{e:#}")));
                    }
                }
            }
        }
        ScoreBatch {
            answers: answers
                .into_iter()
                .map(|a| a.expect("every request answered"))
                .collect(),
            computed_tokens: computed,
        }
    }

    /// A scorer whose lanes hold at least `needed` cells, reusing `existing` when it does.
    fn at_least(
        existing: Option<BatchScorer>,
        rt: &LlamaRuntime,
        model: &'static LlamaModel,
        needed: usize,
        threads: u32,
    ) -> anyhow::Result<BatchScorer> {
        if let Some(scorer) = existing.filter(|s| s.lane_ctx >= needed) {
            return Ok(scorer);
        }
        let lane_ctx = needed.div_ceil(512).max(1) * 512;
        let context = model
            .new_context(rt, params(lane_ctx, threads))
            .context("cannot create a llama.cpp scoring context")?;
        Ok(BatchScorer { context, lane_ctx })
    }

    /// The distributions of every job, the tokens each started from without computing them,
    /// and the tokens computed in all.
    #[allow(clippy::type_complexity)]
    fn compute(
        &mut self,
        jobs: &[Job],
        requests: &[ScoreRequest],
    ) -> anyhow::Result<(Vec<Vec<Distribution>>, Vec<usize>, u64)> {
        let context = &mut self.context;
        context.clear_kv_cache();
        // The prefix every job shares, short of each one's last prompt token (whose logits
        // it needs).
        let shared = jobs
            .iter()
            .map(|j| common_prefix(&jobs[0].tokens, &j.tokens).min(j.prompt_len - 1))
            .min()
            .unwrap_or(0);
        let mut batch = LlamaBatch::new(SCORE_CALL_TOKENS, 1);
        let prefix = &jobs[0].tokens[..shared];
        for (c, chunk) in prefix.chunks(SCORE_CALL_TOKENS).enumerate() {
            batch.clear();
            for (i, token) in chunk.iter().enumerate() {
                batch.add(*token, (c * SCORE_CALL_TOKENS + i) as i32, &[0], false)?;
            }
            context
                .decode(&mut batch)
                .map_err(|e| anyhow!("scoring prefill failed: {e}"))?;
        }
        let mut computed = shared as u64;
        // Families: a job joins the one before it when it extends that one's whole prompt.
        let mut families: Vec<Vec<usize>> = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            match families.last_mut() {
                Some(family)
                    if {
                        let before = &jobs[*family.last().expect("a job")];
                        common_prefix(&before.tokens, &job.tokens) >= before.prompt_len
                    } =>
                {
                    family.push(j)
                }
                _ => families.push(vec![j]),
            }
        }
        let lanes_used = families.len().min(SCORE_LANES);
        for lane in 1..lanes_used {
            context.kv_cache_seq_cp(0, lane as i32, None, None)?;
        }
        let mut lanes: Vec<Lane> = (0..lanes_used)
            .map(|_| Lane {
                held: prefix.to_vec(),
                current: None,
                queue: Default::default(),
            })
            .collect();
        let mut next_family = 0;
        let mut distributions: Vec<Vec<Distribution>> = vec![Vec::new(); jobs.len()];
        let mut kept = vec![0usize; jobs.len()];
        loop {
            // Every lane without work takes its family's next job, or the next family.
            for (l, lane) in lanes.iter_mut().enumerate() {
                if lane.current.is_some() {
                    continue;
                }
                if lane.queue.is_empty() && next_family < families.len() {
                    lane.queue = families[next_family].iter().copied().collect();
                    next_family += 1;
                }
                let Some(j) = lane.queue.pop_front() else {
                    continue;
                };
                let job = &jobs[j];
                let keep = common_prefix(&lane.held, &job.tokens).min(job.prompt_len - 1);
                context.clear_kv_cache_seq(Some(l as u32), Some(keep as u32), None)?;
                lane.held.truncate(keep);
                kept[j] = keep;
                lane.current = Some((j, keep, keep));
            }
            let active: Vec<usize> = (0..lanes.len())
                .filter(|&l| lanes[l].current.is_some())
                .collect();
            if active.is_empty() {
                break;
            }
            // An equal share per lane keeps the call one computation (llama.cpp splits a call
            // over streams into equal shares of consecutive sequences).
            let remaining = |l: usize| {
                let (j, next, _) = lanes[l].current.expect("active");
                jobs[j].tokens.len() - next
            };
            let share = active
                .iter()
                .map(|&l| remaining(l))
                .min()
                .unwrap_or(1)
                .min(SCORE_CALL_TOKENS / active.len())
                .max(1);
            batch.clear();
            let mut reads: Vec<(usize, usize, i32)> = Vec::new();
            for &l in &active {
                let (j, next, _) = lanes[l].current.expect("active");
                let job = &jobs[j];
                for at in next..next + share {
                    let wanted = at + 1 >= job.prompt_len;
                    if wanted {
                        reads.push((j, at + 1 - job.prompt_len, batch.n_tokens()));
                    }
                    batch.add(job.tokens[at], at as i32, &[l as i32], wanted)?;
                }
            }
            context
                .decode(&mut batch)
                .map_err(|e| anyhow!("scoring decode failed: {e}"))?;
            computed += batch.n_tokens() as u64;
            for (j, k, at) in reads {
                let job = &jobs[j];
                let sampling = &requests[job.index].sampling;
                distributions[j].push(sampler_distribution(
                    context,
                    at,
                    sampling,
                    job.continuation[k],
                ));
            }
            for &l in &active {
                let lane = &mut lanes[l];
                let (j, next, start) = lane.current.expect("active");
                let job = &jobs[j];
                lane.held.extend_from_slice(&job.tokens[next..next + share]);
                lane.current = match next + share < job.tokens.len() {
                    true => Some((j, next + share, start)),
                    false => None,
                };
            }
        }
        Ok((distributions, kept, computed))
    }
}

/// Prompt tokens per second of the scoring context with no harness and no reading: a prefix of
/// `prefix` tokens on one lane, copied to every lane, then `tail` tokens on each lane in calls
/// of equal shares, as [`BatchScorer`] computes them. The rate the limit of a score is taken
/// at.
pub fn bare_prefill_rate(
    rt: &LlamaRuntime,
    model: &'static LlamaModel,
    threads: u32,
    prefix: usize,
    tail: usize,
) -> anyhow::Result<f64> {
    let mut scorer = BatchScorer::at_least(None, rt, model, prefix + tail + 1, threads)?;
    let word = model.vocab().tokenize(b" weather", false, false);
    let token = *word.first().context("no token for the benchmark's word")?;
    let context = &mut scorer.context;
    let mut batch = LlamaBatch::new(SCORE_CALL_TOKENS, 1);
    let started = Instant::now();
    for start in (0..prefix).step_by(SCORE_CALL_TOKENS) {
        batch.clear();
        for at in start..(start + SCORE_CALL_TOKENS).min(prefix) {
            batch.add(token, at as i32, &[0], false)?;
        }
        context
            .decode(&mut batch)
            .map_err(|e| anyhow!("prefill failed: {e}"))?;
    }
    for lane in 1..SCORE_LANES {
        context.kv_cache_seq_cp(0, lane as i32, None, None)?;
    }
    let share = SCORE_CALL_TOKENS / SCORE_LANES;
    for start in (prefix..prefix + tail).step_by(share) {
        batch.clear();
        for lane in 0..SCORE_LANES {
            for at in start..(start + share).min(prefix + tail) {
                batch.add(token, at as i32, &[lane as i32], false)?;
            }
        }
        context
            .decode(&mut batch)
            .map_err(|e| anyhow!("prefill failed: {e}"))?;
    }
    let tokens = prefix + SCORE_LANES * tail;
    Ok(tokens as f64 / started.elapsed().as_secs_f64())
}
