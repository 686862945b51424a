//! Command-line interface: the arguments of each command, turned into the options of the
//! module that does the work, and dispatch. One file per command; `args.rs` holds what several
//! share. Every failure becomes one line on stderr and a non-zero exit.

use clap::{Parser, Subcommand};

mod args;
mod bench;
mod chat;
mod check;
mod compare;
mod doctor;
mod fixtures;
mod generate;
mod init;
mod lint;
mod merge;
mod plan;
mod report;
mod run;
mod score;
mod stamp;

pub use args::{default_parallel, BackendArgs, BackendKind, ModelArgs, ParallelArgs, RecordWhat};
pub use bench::{BenchArgs, BenchCommand, BenchRunArgs, BenchScoreArgs};
pub use run::{RunArgs, EXIT_WORSE};

#[derive(Parser, Debug)]
#[command(
    name = "skilleval",
    version,
    about = "Measures whether a skill's new wording makes a small local model behave better or worse",
    after_long_help = "Examples:
  skilleval run --pack weather --variant packs/weather/variants/b.md --limit 30 --repeats 2
  skilleval chat --pack weather --prompt \"how cold is it in berlin today\"
  skilleval doctor"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate a reply to one prompt: the text on stdout, the run's figures on stderr
    #[command(after_long_help = generate::EXAMPLES)]
    Generate(generate::GenerateArgs),
    /// Run one prompt through the harness loop with the tools its skills grant, and print the
    /// transcript with every call and its result
    Chat(chat::ChatArgs),
    /// Compare a skill's baseline wording with a variant over a pack's corpus
    #[command(after_long_help = run::EXAMPLES)]
    Run(Box<run::RunArgs>),
    /// Score each wording without repeats: the model's probability of every sample's reference step
    /// (the call as written, no call where none is needed, the answer from the result) under
    /// the run's own sampler, per category and step, against the baseline and the control
    #[command(after_long_help = score::EXAMPLES)]
    Score(Box<score::ScoreArgs>),
    /// Judge a pack's hand-labelled cases (judge-cases.jsonl) with its laws, print every
    /// disagreement, and check that every corpus sample has a reply that passes
    #[command(after_long_help = check::EXAMPLES)]
    Check(check::CheckArgs),
    /// Score the model on BFCL function-calling entries, or re-score saved results
    /// (`bench --bfcl …` is short for `bench run --bfcl …`)
    #[command(after_long_help = bench::EXAMPLES)]
    Bench(Box<bench::BenchArgs>),
    /// Rebuild a past run's report.md and report.html from its journal and manifest, and write
    /// JUnit XML on request
    #[command(after_long_help = report::EXAMPLES)]
    Report(report::ReportArgs),
    /// Compare two runs of the same pack, per category, paired by sample and repeat: the
    /// variant arm of each (or the baseline, or the arm --arm names), B against A
    #[command(after_long_help = compare::EXAMPLES)]
    Compare(compare::CompareArgs),
    /// Check the model, the llama.cpp build, the threads and every pack; exit 1 on a problem
    Doctor(doctor::DoctorArgs),
    /// Write a run's per-category scores into the winning wording's front matter (as YAML
    /// comments the model never sees) and bump its `version:`
    #[command(after_long_help = stamp::EXAMPLES)]
    Stamp(stamp::StampArgs),
    /// Write a stub fixture for every call of a run that no recording answered, to fill in or
    /// to record over with --record gaps
    #[command(after_long_help = fixtures::EXAMPLES)]
    Fixtures(fixtures::FixturesArgs),
    /// Write a new pack for a skill from its SKILL.md: its tools (a program, an MCP server, a
    /// typed tool or fixtures), starter prompts, laws and judge cases that pass `check`
    #[command(after_long_help = init::EXAMPLES)]
    Init(init::InitArgs),
    /// Check a skills folder against the Agent Skills format: every violation with its file and
    /// line; exit 1 on any
    #[command(after_long_help = lint::EXAMPLES)]
    Lint(lint::LintArgs),
    /// Put the shard runs of one split run (`run --shard I/N`) together into one run folder
    #[command(after_long_help = merge::EXAMPLES)]
    Merge(merge::MergeArgs),
    /// The checks a skill change needs, from a git diff: the packs that measure each changed
    /// skill (with the pack.toml line), what to record, judge again or run; names the skills
    /// no pack measures and refuses a gate that cannot fail
    #[command(after_long_help = plan::EXAMPLES)]
    Plan(plan::PlanArgs),
}

pub fn run_command(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Generate(args) => generate::run(args),
        Command::Chat(args) => chat::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Run(args) => run::run(*args),
        Command::Score(args) => score::run(*args),
        Command::Check(args) => check::run(args),
        Command::Report(args) => report::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Bench(args) => bench::dispatch(*args),
        Command::Merge(args) => merge::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Init(args) => init::run(args),
        Command::Fixtures(args) => fixtures::run(args),
        Command::Stamp(args) => stamp::run(args),
        Command::Plan(args) => plan::run(args),
    }
}
