//! The harness's request for one conversation under a pack, built the same way for `run` (one
//! per unit) and `chat` (one per prompt): the pack's instructions, its worked examples before
//! the conversation, its skill preloaded when it says so, its call format, budgets and call
//! constraint. Without a pack (`chat --skills-dir`), the harness's defaults.

use super::pack::Pack;
use crate::harness::agent::{AgentRequest, Budgets};
use crate::harness::backend::Sampling;
use crate::harness::examples::Presentation;
use crate::harness::skills::SkillTree;
use crate::harness::spill::LongOutput;
use crate::harness::template::Message;
use crate::harness::tools::Registry;

/// The instructions of a conversation under no pack.
const BARE_INSTRUCTIONS: &str = "You are a helpful assistant.";

/// The request for `messages` (the conversation, the user's message last) over `skills` and
/// `tools`, with the skills `preload` names loaded first (and the pack's own skill when the
/// pack preloads it).
pub fn agent_request<'a>(
    pack: Option<&'a Pack>,
    skills: &'a SkillTree,
    tools: &'a Registry,
    messages: &[Message],
    mut preload: Vec<String>,
    sampling: Sampling,
) -> AgentRequest<'a> {
    let Some(pack) = pack else {
        return AgentRequest {
            instructions: BARE_INSTRUCTIONS,
            messages: messages.to_vec(),
            skills,
            preload,
            tools,
            format: None,
            sampling,
            budgets: Budgets::default(),
            constrain_calls: false,
            examples: Presentation::Turns,
            long_output: LongOutput::Cut,
            user: None,
        };
    };
    if pack.preload && !preload.contains(&pack.skill) {
        preload.push(pack.skill.clone());
    }
    AgentRequest {
        instructions: &pack.instructions,
        messages: pack.examples.iter().chain(messages).cloned().collect(),
        skills,
        preload,
        tools,
        format: pack.call_format,
        sampling,
        budgets: pack.budgets,
        constrain_calls: pack.constrained_calls,
        examples: pack.skill_examples,
        long_output: pack.long_tool_output,
        user: None,
    }
}
