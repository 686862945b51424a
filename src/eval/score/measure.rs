//! Every (arm, sample) put through the harness loop under teacher forcing: the probability of
//! each of the sample's reference steps in each arm, with the tokens behind it.

use serde::{Deserialize, Serialize};

use super::forcing::{Forced, Forcing, ScoredStep};
use super::reference::{FirstStep, Reference};
use crate::eval::arm::Arm;
use crate::eval::corpus::Sample;
use crate::eval::pack::Pack;
use crate::eval::request::agent_request;
use crate::harness::agent;
use crate::harness::backend::{Backend, Sampling, TokenScore};
use crate::harness::skills::SkillTree;
use crate::harness::template::Family;
use crate::harness::toolcall::render::render_call;
use crate::harness::tools::Registry;

/// What a step of a reply does, as the report's rows name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Opens the reference call, through the tool's name.
    Calls,
    /// Writes the reference call's arguments as the sample gives them, once it has opened it.
    Arguments,
    /// Writes the reference answer after the call's recorded result.
    Answers,
    /// Opens no call, on a sample whose reference makes none.
    NoCall,
    /// In a conversation, asks the user what the reference turn asks (a question or an
    /// approval), before the scripted user's reply.
    Asks,
}

impl StepKind {
    pub const ALL: [StepKind; 5] = [
        StepKind::Calls,
        StepKind::Arguments,
        StepKind::Answers,
        StepKind::NoCall,
        StepKind::Asks,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StepKind::Calls => "calls the tool",
            StepKind::Arguments => "passes the arguments as written",
            StepKind::Answers => "answers from the result",
            StepKind::NoCall => "does not call when not needed",
            StepKind::Asks => "asks the user first",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            StepKind::Calls => "calls",
            StepKind::Arguments => "arguments",
            StepKind::Answers => "answers",
            StepKind::NoCall => "no_call",
            StepKind::Asks => "asks",
        }
    }
}

/// One reference step of one sample in one arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepScore {
    pub sample_id: String,
    pub category: String,
    pub arm: Arm,
    pub kind: StepKind,
    /// The probability the run's sampler takes this step: the expectation of a sampled run's
    /// indicator.
    pub probability: f64,
    /// Its likelihood under the plain softmax at the run's temperature (`TokenScore`), never
    /// 0: what the rows' ratios compare.
    pub likelihood: f64,
    /// Some token of the step lies outside top-k or the top-p nucleus: the sampler can never
    /// write it, and the probability is 0.
    pub cut_by_sampler: bool,
    /// The scored text as the model would write it.
    pub text: String,
    /// Its tokens with their probabilities.
    pub tokens: Vec<TokenScore>,
    /// Prompt tokens of the round it was scored in.
    pub prompt_tokens: u32,
}

/// A sample's steps in one arm, and the prompt tokens read for them.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredSample {
    pub steps: Vec<StepScore>,
    pub prompt_tokens: u64,
    /// Of those, the tokens whose KV entries came from the cache.
    pub cached_prompt_tokens: u64,
}

/// Why a sample was not scored in an arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unscored {
    pub sample_id: String,
    pub arm: Arm,
    pub why: String,
}

/// Scores one sample under one arm's skills tree: the loop runs on the forcing backend, and
/// each forced step's probability is read off its tokens.
#[allow(clippy::too_many_arguments)]
pub fn score_sample(
    backend: &mut dyn Backend,
    pack: &Pack,
    tree: &SkillTree,
    registry: &Registry,
    sample: &Sample,
    arm: Arm,
    reference: &Reference,
    sampling: Sampling,
) -> Result<ScoredSample, Unscored> {
    let family = backend.family();
    let format = pack
        .call_format
        .unwrap_or_else(|| family.default_call_format());
    let mut steps = Vec::new();
    let call_step = |tool: &str, arguments: &serde_json::Map<String, serde_json::Value>| {
        let text = render_call(format, tool, arguments);
        let name_end = text.find(tool).map_or(0, |at| at + tool.len());
        Forced::Call { text, name_end }
    };
    // A conversation: every turn's calls, then its reply; each reply but the last asks.
    for (i, turn) in reference.turns.iter().enumerate() {
        for call in &turn.calls {
            steps.push(call_step(&call.tool, &call.arguments));
        }
        let text = turn.reply.clone();
        steps.push(match i + 1 == reference.turns.len() {
            true => Forced::Answer { text },
            false => Forced::Ask { text },
        });
    }
    match &reference.first {
        _ if !reference.turns.is_empty() => {}
        FirstStep::NoCall => steps.push(Forced::NoCall {
            opener: format.opener().to_string(),
        }),
        FirstStep::Call {
            tool, arguments, ..
        } => {
            let text = render_call(format, tool, arguments);
            let name_end = text.find(tool.as_str()).map_or(0, |at| at + tool.len());
            steps.push(Forced::Call { text, name_end });
            if let Some(answer) = &reference.answer {
                steps.push(Forced::Answer {
                    text: answer.clone(),
                });
            }
        }
    }
    let mut request = agent_request(
        Some(pack),
        tree,
        registry,
        &sample.messages,
        Vec::new(),
        sampling,
    );
    request.user = sample.user.as_ref();
    let mut forcing = Forcing::new(backend, steps);
    let transcript = agent::run(&mut forcing, &request);
    let unscored = |why: String| Unscored {
        sample_id: sample.id.clone(),
        arm,
        why,
    };
    if forcing.scored.is_empty() {
        let why = match &transcript.stop {
            crate::harness::transcript::StopReason::Error(e) => e.clone(),
            other => format!("the loop ended before any step ({other:?})"),
        };
        return Err(unscored(why));
    }
    // The answer is read only after a call the recordings answered: after a gap or an error
    // the model is shown something no reference answer was written for.
    let answered_well = |c: &crate::harness::transcript::CallRecord| {
        !c.is_error && c.meta.get("gap").and_then(|g| g.as_bool()) != Some(true)
    };
    let answered = match reference.turns.is_empty() {
        true => transcript
            .rounds
            .first()
            .is_some_and(|round| !round.calls.is_empty() && round.calls.iter().all(answered_well)),
        // A conversation's answer is read when every call on its path was answered as
        // recorded, and the scripted user said each reply it was written for.
        false => {
            transcript.calls().all(answered_well)
                && transcript.user_turns().count() + 1 == reference.turns.len()
        }
    };
    let mut out = Vec::new();
    // A conversation's reference turns write every call's arguments out, so each is scored.
    let first_arguments_known = !reference.turns.is_empty()
        || matches!(
            reference.first,
            FirstStep::Call {
                arguments_known: true,
                ..
            }
        );
    for scored in &forcing.scored {
        out.extend(step_scores(
            scored,
            sample,
            arm,
            family,
            first_arguments_known,
            answered,
        ));
    }
    Ok(ScoredSample {
        steps: out,
        prompt_tokens: forcing
            .scored
            .iter()
            .map(|s| u64::from(s.score.prompt_tokens))
            .sum(),
        cached_prompt_tokens: forcing
            .scored
            .iter()
            .map(|s| u64::from(s.score.cached_prompt_tokens))
            .sum(),
    })
}

/// The rows' steps in one forced reply.
fn step_scores(
    scored: &ScoredStep,
    sample: &Sample,
    arm: Arm,
    family: Family,
    arguments_known: bool,
    answered: bool,
) -> Vec<StepScore> {
    let lead = family.reply_lead();
    let score = &scored.score;
    let make = |kind: StepKind, no_call: bool, text: String, tokens: Vec<TokenScore>| {
        let cut_by_sampler = tokens.iter().any(|t| t.probability == 0.0);
        let probability: f64 = tokens.iter().map(|t| t.probability).product();
        let likelihood: f64 = tokens.iter().map(|t| t.likelihood).product();
        // "No call" is the complement of opening one.
        let (probability, likelihood) = if no_call {
            (1.0 - probability, 1.0 - likelihood)
        } else {
            (probability, likelihood)
        };
        StepScore {
            sample_id: sample.id.clone(),
            category: sample.category.clone(),
            arm,
            kind,
            probability,
            likelihood,
            cut_by_sampler,
            text,
            tokens,
            prompt_tokens: score.prompt_tokens,
        }
    };
    match &scored.step {
        Forced::NoCall { opener } => vec![make(
            StepKind::NoCall,
            true,
            format!("{lead}{opener}"),
            score.tokens.clone(),
        )],
        Forced::Call { text, name_end } => {
            let end = scored.lead + name_end;
            let (through, rest): (Vec<TokenScore>, Vec<TokenScore>) =
                score.tokens.iter().cloned().partition(|t| t.end <= end);
            let mut steps = vec![make(
                StepKind::Calls,
                false,
                format!("{lead}{}", &text[..*name_end]),
                through,
            )];
            if arguments_known {
                steps.push(make(
                    StepKind::Arguments,
                    false,
                    text[*name_end..].to_string(),
                    rest,
                ));
            }
            steps
        }
        Forced::Answer { text } if answered => vec![make(
            StepKind::Answers,
            false,
            format!("{lead}{text}"),
            score.tokens.clone(),
        )],
        Forced::Answer { .. } => Vec::new(),
        Forced::Ask { text } => vec![make(
            StepKind::Asks,
            false,
            format!("{lead}{text}"),
            score.tokens.clone(),
        )],
    }
}
