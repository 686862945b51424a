//! Teacher forcing through the harness: a backend that, asked for a round's reply, reads the
//! probability of the reference step under the run's sampler and answers with that step. The
//! harness's own loop renders every prompt, parses the forced call, answers it from the
//! recordings and renders the next round, so a scored prompt is exactly the prompt a run sends.

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

/// A forced step with its score, and the lead the continuation began with.
#[derive(Debug, Clone)]
pub struct ScoredStep {
    pub step: Forced,
    /// Bytes of the family's reply lead before the step's own text in `score`.
    pub lead: usize,
    pub score: ContinuationScore,
}

/// The backend the harness loop runs on while scoring.
pub struct Forcing<'b> {
    inner: &'b mut dyn Backend,
    steps: VecDeque<Forced>,
    pub scored: Vec<ScoredStep>,
}

impl<'b> Forcing<'b> {
    pub fn new(inner: &'b mut dyn Backend, steps: Vec<Forced>) -> Self {
        Forcing {
            inner,
            steps: steps.into(),
            scored: Vec::new(),
        }
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
        });
        Ok(Generation {
            text: reply,
            finish: FinishReason::Eos,
            metrics,
        })
    }
}
