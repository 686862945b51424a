//! A backend that replays given replies in order: for testing everything above the model.
//! Words stand in for tokens, and the request's stop strings cut a reply as the real backend's do.

use std::collections::VecDeque;

use anyhow::bail;

use skilleval::harness::backend::llama::first_stop;
use skilleval::harness::backend::{Backend, BackendInfo, FinishReason, GenRequest, Generation};
use skilleval::harness::template::Family;
use skilleval::harness::toolcall::grammar::CallGrammar;

#[derive(Debug, Clone)]
pub struct ScriptedBackend {
    family: Family,
    replies: VecDeque<String>,
    /// Every prompt it was asked to continue, for assertions.
    pub prompts: Vec<String>,
    /// The call grammar of each request, in order (it is not enforced here).
    pub grammars: Vec<Option<CallGrammar>>,
}

impl ScriptedBackend {
    pub fn new(family: Family, replies: impl IntoIterator<Item = impl Into<String>>) -> Self {
        ScriptedBackend {
            family,
            replies: replies.into_iter().map(Into::into).collect(),
            prompts: Vec::new(),
            grammars: Vec::new(),
        }
    }

    pub fn remaining(&self) -> usize {
        self.replies.len()
    }
}

impl Backend for ScriptedBackend {
    fn family(&self) -> Family {
        self.family
    }

    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "scripted".into(),
            ..Default::default()
        }
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        self.prompts.push(request.prompt.clone());
        self.grammars.push(request.grammar.clone());
        let Some(reply) = self.replies.pop_front() else {
            bail!("the scripted backend has no reply left");
        };
        // Words stand in for tokens, so token budgets still bite.
        let words: Vec<&str> = reply.split_inclusive(char::is_whitespace).collect();
        let budget = request.max_tokens as usize;
        let (mut text, mut finish) = if words.len() > budget {
            (words[..budget].concat(), FinishReason::MaxTokens)
        } else {
            (reply.clone(), FinishReason::Eos)
        };
        if let Some((at, stop)) = first_stop(&text, &request.stop) {
            text.truncate(at);
            finish = FinishReason::Stop(stop);
        }
        Ok(super::scripted::word_counted(request, text, finish))
    }
}
