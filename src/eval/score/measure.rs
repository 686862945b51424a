//! Every (arm, sample) put through the harness loop under teacher forcing: the probability of
//! each of the sample's reference steps in each arm, with the tokens behind it, and at a
//! free-text step the share of replies drawn under the run's sampler that the pack's laws pass.

use serde::{Deserialize, Serialize};

use super::forcing::{Draws, Forced, Forcing, Replay, ScoredStep};
use super::reference::{FirstStep, Reference};
use crate::eval::arm::Arm;
use crate::eval::corpus::Sample;
use crate::eval::judge::{self, Judges, Law};
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
    /// Opens the reference call and writes its arguments as the sample gives them: the whole
    /// call, as a sampled run's argument law sees it.
    Arguments,
    /// Answers after the call's recorded result in a way the pack's answer laws pass: the share
    /// of replies drawn at that point that they pass.
    Answers,
    /// Opens no call, on a sample whose reference makes none.
    NoCall,
    /// In a conversation, asks the user before acting in a way the pack's asking laws pass
    /// (`asks_before_call`, `confirms_before_call`): the share of drawn replies they pass.
    Asks,
    /// The reference answer's own words: one string of the many the laws accept, so a
    /// diagnostic, never a verdict.
    AnswerWords,
    /// The reference question's own words, likewise a diagnostic.
    QuestionWords,
}

impl StepKind {
    pub const ALL: [StepKind; 7] = [
        StepKind::Calls,
        StepKind::Arguments,
        StepKind::Answers,
        StepKind::NoCall,
        StepKind::Asks,
        StepKind::AnswerWords,
        StepKind::QuestionWords,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StepKind::Calls => "calls the tool",
            StepKind::Arguments => "calls with the arguments as written",
            StepKind::Answers => "answers as the laws ask",
            StepKind::NoCall => "does not call when not needed",
            StepKind::Asks => "asks the user as the laws ask",
            StepKind::AnswerWords => "writes the reference answer's words",
            StepKind::QuestionWords => "writes the reference question's words",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            StepKind::Calls => "calls",
            StepKind::Arguments => "arguments",
            StepKind::Answers => "answers",
            StepKind::NoCall => "no_call",
            StepKind::Asks => "asks",
            StepKind::AnswerWords => "answer_words",
            StepKind::QuestionWords => "question_words",
        }
    }

    /// A row of one reference string's probability: shown, never given a verdict, since a
    /// wording that moves the odds of one phrasing need not change what the laws judge.
    pub fn diagnostic(self) -> bool {
        matches!(self, StepKind::AnswerWords | StepKind::QuestionWords)
    }
}

/// Replies drawn at a free-text step and how many the laws passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    pub replies: u32,
    pub passed: u32,
    /// The laws that judged them.
    pub laws: Vec<String>,
    /// Each drawn reply, with whether it passed.
    pub texts: Vec<(String, bool)>,
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
    /// For a step judged by the laws: the replies drawn and how many passed (the
    /// probability is their share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drawn: Option<Drawn>,
}

/// A sample's steps in one arm, and the prompt tokens read for them.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredSample {
    pub steps: Vec<StepScore>,
    pub prompt_tokens: u64,
    /// Of those, the tokens whose KV entries came from the cache.
    pub cached_prompt_tokens: u64,
    /// Tokens generated for the drawn replies.
    pub drawn_tokens: u64,
}

/// Why a sample was not scored in an arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unscored {
    pub sample_id: String,
    pub arm: Arm,
    pub why: String,
}

/// Scores one sample under one arm's skills tree: the loop runs on the forcing backend, and
/// each forced step's probability is read off its tokens. With `draws`, each free-text step also
/// draws that many replies, and the laws that judge such a reply pass or fail each.
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
    draws: u32,
    drawer: Option<&dyn Backend>,
) -> Result<ScoredSample, Unscored> {
    let family = backend.family();
    let info = backend.info();
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
            steps.push(call_step(tool, arguments));
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
    let draws = Draws {
        count: draws,
        seed: crate::eval::stats::method::seed_for(&["score draws", &sample.id]),
    };
    let mut forcing = Forcing::new(backend, steps, draws, drawer);
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
    let first_arguments_known = matches!(
        reference.first,
        FirstStep::Call {
            arguments_known: true,
            ..
        }
    );
    // Every call of a conversation has its arguments written out in `reference_turns`.
    let arguments_known = first_arguments_known || !reference.turns.is_empty();
    let mut out = Vec::new();
    for (at, scored) in forcing.scored.iter().enumerate() {
        let context = StepContext {
            sample,
            arm,
            family,
            arguments_known,
            answered,
        };
        out.extend(step_scores(scored, &context));
        if scored.drawn.is_empty() || (matches!(scored.step, Forced::Answer { .. }) && !answered) {
            continue;
        }
        let judged = judge_draws(pack, &request, &forcing.scored, at, family, &info, sample);
        if let Some((kind, drawn)) = judged {
            out.push(drawn_step(kind, drawn, &context, scored));
        }
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
        drawn_tokens: forcing.scored.iter().map(|s| s.drawn_tokens).sum(),
    })
}

/// What every step of one (sample, arm) shares.
struct StepContext<'a> {
    sample: &'a Sample,
    arm: Arm,
    family: Family,
    arguments_known: bool,
    answered: bool,
}

/// The laws that judge a drawn reply at step `at`, and what they found: each draw is given to
/// the loop after the forced replies before it, so its calls are parsed and answered and the
/// scripted user answers its question as in a run; the laws that judge that kind of reply are
/// applied to the transcript up to it. `None` when no such law applies to the sample.
fn judge_draws(
    pack: &Pack,
    request: &agent::AgentRequest,
    scored: &[ScoredStep],
    at: usize,
    family: Family,
    info: &crate::harness::backend::BackendInfo,
    sample: &Sample,
) -> Option<(StepKind, Drawn)> {
    let (kind, judges) = match scored[at].step {
        Forced::Answer { .. } => (StepKind::Answers, Judges::Answer),
        Forced::Ask { .. } => (StepKind::Asks, Judges::Asking),
        _ => return None,
    };
    let laws: Vec<Law> = pack
        .laws
        .iter()
        .filter(|law| law.check().judges() == judges)
        .filter(|law| judge::applies(law, &sample.category, &sample.fields))
        .cloned()
        .collect();
    if laws.is_empty() {
        return None;
    }
    let mut texts = Vec::new();
    for draw in &scored[at].drawn {
        let mut replies: Vec<String> = scored[..at].iter().map(|s| s.reply.clone()).collect();
        replies.push(draw.clone());
        let mut replay = Replay::new(family, info.clone(), replies);
        let mut transcript = agent::run(&mut replay, request);
        let passed = match transcript.rounds.get(at) {
            // The loop did not reach the draw as it reached the reference: nothing to judge.
            None => false,
            Some(round) => {
                let answers = round.calls.is_empty();
                transcript.reply = match answers {
                    true => round.prose.trim().to_string(),
                    false => String::new(),
                };
                transcript.rounds.truncate(at + 1);
                // An answer is a reply without a call; asking is judged whatever the reply did.
                (answers || judges == Judges::Asking)
                    && judge::judge_sample(&laws, sample, &transcript).passed
            }
        };
        texts.push((draw.clone(), passed));
    }
    Some((
        kind,
        Drawn {
            replies: texts.len() as u32,
            passed: texts.iter().filter(|(_, p)| *p).count() as u32,
            laws: laws.iter().map(|l| l.name.clone()).collect(),
            texts,
        },
    ))
}

/// The row's step for replies drawn and judged: its probability is the share that passed.
fn drawn_step(
    kind: StepKind,
    drawn: Drawn,
    context: &StepContext,
    scored: &ScoredStep,
) -> StepScore {
    let share = f64::from(drawn.passed) / f64::from(drawn.replies.max(1));
    StepScore {
        sample_id: context.sample.id.clone(),
        category: context.sample.category.clone(),
        arm: context.arm,
        kind,
        probability: share,
        likelihood: share,
        cut_by_sampler: false,
        text: format!(
            "{} of {} drawn replies pass {}",
            drawn.passed,
            drawn.replies,
            drawn.laws.join(", ")
        ),
        tokens: Vec::new(),
        prompt_tokens: scored.score.prompt_tokens,
        drawn: Some(drawn),
    }
}

/// The rows' steps in one forced reply.
fn step_scores(scored: &ScoredStep, context: &StepContext) -> Vec<StepScore> {
    let lead = context.family.reply_lead();
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
            sample_id: context.sample.id.clone(),
            category: context.sample.category.clone(),
            arm: context.arm,
            kind,
            probability,
            likelihood,
            cut_by_sampler,
            text,
            tokens,
            prompt_tokens: score.prompt_tokens,
            drawn: None,
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
            let through: Vec<TokenScore> = score
                .tokens
                .iter()
                .filter(|t| t.end <= end)
                .cloned()
                .collect();
            let mut steps = vec![make(
                StepKind::Calls,
                false,
                format!("{lead}{}", &text[..*name_end]),
                through,
            )];
            // The whole call, opening and arguments: the event a sampled run's argument law
            // sees, in its units (not the arguments given that the call was opened).
            if context.arguments_known {
                steps.push(make(
                    StepKind::Arguments,
                    false,
                    format!("{lead}{text}"),
                    score.tokens.clone(),
                ));
            }
            steps
        }
        Forced::Answer { text } if context.answered => vec![make(
            StepKind::AnswerWords,
            false,
            format!("{lead}{text}"),
            score.tokens.clone(),
        )],
        Forced::Answer { .. } => Vec::new(),
        Forced::Ask { text } => vec![make(
            StepKind::QuestionWords,
            false,
            format!("{lead}{text}"),
            score.tokens.clone(),
        )],
    }
}
