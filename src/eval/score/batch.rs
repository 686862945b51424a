//! An arm's score requests computed together: a first walk of every sample through the forcing
//! collects them (the forced replies do not depend on any probability, so the walk needs no
//! model), the backend computes them all at once (`Backend::score_batch`), and a second walk
//! answers each from those results in the same order. The arrangement of that computation is
//! fixed by the requests alone, never by timing.

use std::collections::VecDeque;

use crate::harness::backend::{
    Backend, BackendInfo, ContinuationScore, EngineStats, GenRequest, Generation, ScoreRequest,
};
use crate::harness::template::Family;

/// The first walk's backend: keeps every score request and answers it with nothing (the forcing
/// gives the loop the reference step whatever the score).
pub struct Collecting<'b> {
    inner: &'b dyn Backend,
    pub requests: Vec<ScoreRequest>,
}

impl<'b> Collecting<'b> {
    pub fn new(inner: &'b dyn Backend) -> Self {
        Collecting {
            inner,
            requests: Vec::new(),
        }
    }
}

impl Backend for Collecting<'_> {
    fn family(&self) -> Family {
        self.inner.family()
    }

    fn info(&self) -> BackendInfo {
        self.inner.info()
    }

    fn generate(&mut self, _request: &GenRequest) -> anyhow::Result<Generation> {
        anyhow::bail!("the walk that collects score requests generates nothing")
    }

    fn score(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        self.requests.push(request.clone());
        Ok(ContinuationScore::default())
    }
}

/// The second walk's backend: answers each score request with the result computed for it. A
/// request that is not the next one collected (which the walk's determinism rules out) is
/// scored on its own on the inner backend, so an answer is never another request's.
pub struct Answering<'b> {
    inner: &'b mut dyn Backend,
    answers: VecDeque<(ScoreRequest, anyhow::Result<ContinuationScore>)>,
}

impl<'b> Answering<'b> {
    pub fn new(
        inner: &'b mut dyn Backend,
        requests: Vec<ScoreRequest>,
        answers: Vec<anyhow::Result<ContinuationScore>>,
    ) -> Self {
        Answering {
            inner,
            answers: requests.into_iter().zip(answers).collect(),
        }
    }
}

impl Backend for Answering<'_> {
    fn family(&self) -> Family {
        self.inner.family()
    }

    fn info(&self) -> BackendInfo {
        self.inner.info()
    }

    fn engine_stats(&self) -> Option<EngineStats> {
        self.inner.engine_stats()
    }

    /// Draws made without a drawer decode on the scoring backend.
    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        self.inner.generate(request)
    }

    fn score(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        match self.answers.front() {
            Some((collected, _)) if collected == request => {
                let (_, answer) = self.answers.pop_front().expect("an answer");
                answer
            }
            _ => self.inner.score(request),
        }
    }
}
