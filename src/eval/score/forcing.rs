//! Teacher forcing through the harness: a backend that, asked for a round's reply, reads the
//! probability of the reference step under the run's sampler and answers with that step. The
//! harness's own loop renders every prompt, parses the forced call, answers it from the
//! recordings and renders the next round, so a scored prompt is exactly the prompt a run sends.
//! At a free-text step (an answer, a question to the user) it can also draw replies under the
//! run's sampler, which the laws then judge (`measure`).

use std::collections::VecDeque;

use crate::harness::backend::{
    Backend, BackendInfo, ContinuationScore, FinishReason, GenMetrics, GenRequest, Generation,
    ScoreRequest,
};
use crate::harness::template::Family;

/// One reply the loop is given, and what is scored of it.
#[derive(Debug, Clone, PartialEq)]
pub enum Forced {
    /// A call: the whole text is scored; `name_end` is the byte in it where the tool's name
    /// ends (what is read as "calls the tool").
    Call { text: String, name_end: usize },
    /// No call: only the call syntax's opener is scored (its complement is the step), and the
    /// loop is given an empty reply, which ends it.
    NoCall { opener: String },
    /// The answer after the call's result.
    Answer { text: String },
    /// A reply that asks the user something, in a conversation: the scripted user answers it
    /// and the loop goes on.
    Ask { text: String },
}

impl Forced {
    /// A reply in free text, whose reference words are one of many a law accepts.
    pub fn is_free_text(&self) -> bool {
        matches!(self, Forced::Answer { .. } | Forced::Ask { .. })
    }
}

/// A forced step with its score, and the lead the continuation began with.
#[derive(Debug, Clone)]
pub struct ScoredStep {
    pub step: Forced,
    /// Bytes of the family's reply lead before the step's own text in `score`.
    pub lead: usize,
    pub score: ContinuationScore,
    /// The reply the loop was given (the lead and the step's text; empty for "no call").
    pub reply: String,
    /// Replies drawn under the run's sampler at this step, from the same prompt (free-text
    /// steps only, and only when draws were asked for).
    pub drawn: Vec<String>,
    /// Generated tokens of those draws.
    pub drawn_tokens: u64,
}

/// How many replies to draw at each free-text step, and the seeds they are drawn with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Draws {
    pub count: u32,
    /// Seeds come from this and the step's place, never from the arm: every arm draws with
    /// the same seeds, so their difference is not the noise of different seeds.
    pub seed: u64,
}

impl Draws {
    pub const NONE: Draws = Draws { count: 0, seed: 0 };

    /// The seed of draw `k` at the `step`-th reply.
    pub fn seed_of(&self, step: usize, k: u32) -> u32 {
        let mixed = crate::eval::stats::method::seed_for(&[
            &self.seed.to_string(),
            &step.to_string(),
            &k.to_string(),
        ]);
        (mixed ^ (mixed >> 32)) as u32
    }
}

/// The backend the harness loop runs on while scoring.
pub struct Forcing<'b> {
    inner: &'b mut dyn Backend,
    steps: VecDeque<Forced>,
    draws: Draws,
    /// A backend that serves several callers at once (the batched engine with chunk-aligned
    /// reuse), on whose forks the draws of a step decode together; without one they decode one
    /// after another on `inner`.
    drawer: Option<&'b dyn Backend>,
    pub scored: Vec<ScoredStep>,
}

impl<'b> Forcing<'b> {
    pub fn new(
        inner: &'b mut dyn Backend,
        steps: Vec<Forced>,
        draws: Draws,
        drawer: Option<&'b dyn Backend>,
    ) -> Self {
        Forcing {
            inner,
            steps: steps.into(),
            draws,
            drawer,
            scored: Vec::new(),
        }
    }

    /// The replies drawn at the `at`-th step from `request`, in the order of their seeds: at
    /// once on forks of the drawer, else one after another on the scoring backend. Either way
    /// a prompt and a seed give the same reply in every arm (the scoring backend and the drawer
    /// reuse cached prefixes only in whole chunks), so an A/A reads exactly no change.
    fn draw(&mut self, request: &GenRequest, at: usize) -> anyhow::Result<Vec<Generation>> {
        let requests: Vec<GenRequest> = (0..self.draws.count)
            .map(|k| {
                let mut draw = request.clone();
                draw.sampling.seed = self.draws.seed_of(at, k);
                draw
            })
            .collect();
        let forks: Option<Vec<Box<dyn Backend + Send>>> = self
            .drawer
            .and_then(|d| requests.iter().map(|_| d.fork()).collect());
        let Some(forks) = forks else {
            return requests.iter().map(|r| self.inner.generate(r)).collect();
        };
        std::thread::scope(|scope| {
            let running: Vec<_> = forks
                .into_iter()
                .zip(&requests)
                .map(|(mut fork, r)| scope.spawn(move || fork.generate(r)))
                .collect();
            running
                .into_iter()
                .map(|t| {
                    t.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a draw's thread panicked")))
                })
                .collect()
        })
    }
}

impl Backend for Forcing<'_> {
    fn family(&self) -> Family {
        self.inner.family()
    }

    fn info(&self) -> BackendInfo {
        self.inner.info()
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        let Some(step) = self.steps.pop_front() else {
            anyhow::bail!("no reference step is left to score");
        };
        let lead = self.family().reply_lead();
        let (scored, reply) = match &step {
            Forced::Call { text, .. } | Forced::Answer { text } | Forced::Ask { text } => {
                (format!("{lead}{text}"), format!("{lead}{text}"))
            }
            Forced::NoCall { opener } => (format!("{lead}{opener}"), String::new()),
        };
        let score = self.inner.score(&ScoreRequest {
            prompt: request.prompt.clone(),
            markers: request.markers.clone(),
            continuation: scored,
            sampling: request.sampling,
        })?;
        let mut drawn = Vec::new();
        let mut drawn_tokens = 0u64;
        if step.is_free_text() && self.draws.count > 0 {
            for generation in self.draw(request, self.scored.len())? {
                drawn_tokens += u64::from(generation.metrics.generated_tokens);
                drawn.push(generation.text);
            }
        }
        let metrics = GenMetrics {
            prompt_tokens: score.prompt_tokens,
            cached_prompt_tokens: score.cached_prompt_tokens,
            generated_tokens: 0,
            prefill_secs: score.secs,
            decode_secs: 0.0,
            ttft_secs: 0.0,
        };
        self.scored.push(ScoredStep {
            step,
            lead: lead.len(),
            score,
            reply: reply.clone(),
            drawn,
            drawn_tokens,
        });
        Ok(Generation {
            text: reply,
            finish: FinishReason::Eos,
            metrics,
        })
    }
}

/// The backend a drawn reply is judged on: it gives the loop the forced replies before the
/// draw, then the draw, and ends the loop at the next request, so the harness builds the
/// transcript a run would have up to that reply (its calls parsed and answered, the scripted
/// user's answer to a question).
pub struct Replay {
    family: Family,
    info: BackendInfo,
    replies: VecDeque<String>,
}

impl Replay {
    pub fn new(family: Family, info: BackendInfo, replies: Vec<String>) -> Self {
        Replay {
            family,
            info,
            replies: replies.into(),
        }
    }
}

/// What the replay ends the loop with once its replies are given.
pub const REPLAY_ENDS: &str = "the drawn reply is judged here";

impl Backend for Replay {
    fn family(&self) -> Family {
        self.family
    }

    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    fn generate(&mut self, _request: &GenRequest) -> anyhow::Result<Generation> {
        let Some(text) = self.replies.pop_front() else {
            anyhow::bail!(REPLAY_ENDS);
        };
        Ok(Generation {
            text,
            finish: FinishReason::Eos,
            metrics: GenMetrics::default(),
        })
    }
}
