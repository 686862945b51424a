//! `skilleval check`: a pack's laws against its hand-labelled cases, and every corpus sample
//! proved passable.

use clap::Args;

use crate::eval::law_cases;
use crate::eval::pack::Pack;
use crate::eval::replay::RecordMode;
use crate::eval::stats::reach;

pub const EXAMPLES: &str = "Examples:
  skilleval check --pack weather
  skilleval check --pack path/to/my-pack     # a pack folder holding pack.toml and judge-cases.jsonl
  skilleval check --pack path/to/my-pack --record   # record the reference calls no fixture answers";

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Pack name (packs/NAME) or path
    #[arg(long)]
    pub pack: String,
    /// Ask the pack's live tools (command, mcp, weather_lookup) for the reference calls and case
    /// calls no recording answers, and keep their answers as fixtures
    #[arg(long)]
    pub record: bool,
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let mode = if args.record {
        RecordMode::Gaps
    } else {
        RecordMode::Off
    };
    let pack = Pack::load(&args.pack)?;
    // The skills tree as a run reads it: a skill a run would refuse is refused here too.
    pack.skills(None)?;
    let report = law_cases::check_recording(&pack, mode)?;
    crate::out!("{}", report.render());
    for warning in prose_example_warnings(&pack)? {
        crate::outln!("{warning}");
    }
    for warning in skill_format_warnings(&pack, None) {
        crate::outln!("{warning}");
    }
    // A category too small for a verdict is found here, not after a long run.
    let samples = pack.corpus(None)?;
    let sizes = reach::category_sizes(samples.iter().map(|s| s.category.as_str()));
    for warning in reach::small_category_warnings(&sizes, pack.laws.len(), 1) {
        crate::outln!("{warning}");
    }
    Ok(if report.agrees() { 0 } else { 1 })
}

/// Each front-matter field of the pack's skills that breaks the Agent Skills format (a
/// `description` over 1,024 characters, say), one line naming the file, the line and the
/// field. The loader stays lenient, so that a skill written for another client still loads;
/// `lint` holds skills to the format, and these lines keep `check`, `run` and `score` from
/// passing over what `lint` refuses in silence.
pub(super) fn skill_format_warnings(
    pack: &Pack,
    skills_dir: Option<&std::path::Path>,
) -> Vec<String> {
    use crate::harness::skills::lint;
    let dir = skills_dir.unwrap_or(&pack.skills_dir);
    let Ok(report) = lint::lint_path(dir) else {
        return Vec::new();
    };
    report
        .findings
        .iter()
        .filter(|f| f.severity == lint::Severity::Error && !f.field.is_empty() && f.field != "body")
        .map(|f| {
            format!("warning: {f} (`skilleval lint` refuses it; the skill is used as written)")
        })
        .collect()
}

/// The skill under test's worked examples written as prose, one warning line each: found
/// before any model time, since a small model copies no call from them.
pub(super) fn prose_example_warnings(pack: &Pack) -> anyhow::Result<Vec<String>> {
    let tree = pack.skills(None)?;
    let Some(skill) = tree.get(&pack.skill) else {
        return Ok(Vec::new());
    };
    let Ok(text) = crate::base::input::read_input_to_string(&skill.source) else {
        return Ok(Vec::new());
    };
    Ok(
        crate::harness::skills::lint::prose_example_findings(&text, &skill.source)
            .iter()
            .map(ToString::to_string)
            .collect(),
    )
}
