//! One unit of a run: a sample under one arm's skills tree and one seed, through the harness,
//! judged into a journal entry.

use crate::eval::corpus::Sample;
use crate::eval::judge;
use crate::eval::pack::Pack;
use crate::eval::plan::Unit;
use crate::eval::record::JournalEntry;
use crate::eval::replay;
use crate::eval::request::agent_request;
use crate::harness::agent;
use crate::harness::backend::{Backend, Sampling};
use crate::harness::skills::SkillTree;
use crate::harness::tools::Registry;

/// Runs one unit of work: a sample, an arm, a repeat. Pure in its inputs: the result does not
/// depend on what ran before.
pub fn run_unit(
    backend: &mut dyn Backend,
    pack: &Pack,
    tree: &SkillTree,
    registry: &Registry,
    sample: &Sample,
    unit: &Unit,
    sampling: Sampling,
) -> JournalEntry {
    let sampling = Sampling {
        seed: unit.seed,
        ..sampling
    };
    let mut request = agent_request(
        Some(pack),
        tree,
        registry,
        &sample.messages,
        Vec::new(),
        sampling,
    );
    request.user = sample.user.as_ref();
    let transcript = agent::run(backend, &request);
    let (judgement, gapped) = judge::judge_unit(&pack.laws, sample, &transcript);
    JournalEntry {
        sample_id: sample.id.clone(),
        category: sample.category.clone(),
        arm: unit.arm,
        repeat: unit.repeat,
        seed: unit.seed,
        gapped,
        errored: matches!(
            transcript.stop,
            crate::harness::transcript::StopReason::Error(_)
        ) || replay::recording_failure(&transcript).is_some(),
        judgement,
        transcript,
    }
}
