//! `skilleval run`: a pack's baseline against a variant (and the control arm), the table on
//! stdout, the run folder under `--output`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::args::{record_mode, BackendArgs, ModelArgs, ParallelArgs, RecordWhat};
use crate::eval::pack::Pack;
use crate::eval::runner::{self, RunOptions};
use crate::eval::shard::Shard;
use crate::eval::{report, stats};

/// Exit code when `--fail-on worse` finds a category worse beyond noise.
pub const EXIT_WORSE: u8 = 3;

pub const EXAMPLES: &str = "Examples:
  skilleval run --pack weather --variant b.md --fail-on worse --junit results.xml
  skilleval run --pack weather --variant b.md --backend openai --endpoint http://127.0.0.1:8080 --parallel 4
  skilleval run --pack weather --variant b.md --shard 2/3   # this machine's third; then `merge`";

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FailOn {
    /// Any category worse beyond noise
    Worse,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Pack name (packs/<name>) or path to a pack folder or pack.toml
    #[arg(long)]
    pub pack: String,
    /// A SKILL.md (or a body alone) laid over the skill under test
    #[arg(long)]
    pub variant: Option<PathBuf>,
    /// Baseline skills tree instead of the pack's own
    #[arg(long)]
    pub skills_dir: Option<PathBuf>,
    /// Another corpus of the same shape
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Times each sample runs in each arm, each with its own recorded seed
    #[arg(long, default_value_t = 3)]
    pub repeats: u32,
    /// Run seed: every unit's seed derives from it, the sample, the arm and the repeat
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run only these categories (repeatable, or several separated by commas)
    #[arg(long, value_delimiter = ',')]
    pub category: Vec<String>,
    /// Run at most N samples, taking categories in turn
    #[arg(long)]
    pub limit: Option<usize>,
    /// Answer calls from the live service and keep the answers as fixtures
    #[arg(long, num_args = 0..=1, default_missing_value = "gaps")]
    pub record: Option<RecordWhat>,
    /// Sampling temperature (default: the pack's)
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Sample from the K likeliest tokens (default: the pack's)
    #[arg(long)]
    pub top_k: Option<i32>,
    /// Sample from the likeliest tokens that make up this probability (default: the pack's)
    #[arg(long)]
    pub top_p: Option<f32>,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Exit with code 3 when the variant is worse beyond noise in some category or in total
    #[arg(long)]
    pub fail_on: Option<FailOn>,
    /// Skip the control arm (the skill with an empty body) that measures the skill's own effect
    #[arg(long)]
    pub no_control: bool,
    /// Continue an interrupted run from its journal
    #[arg(long)]
    pub resume: Option<String>,
    /// Where run folders go
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Run only slice I of N of the run (every arm and repeat of every Nth sample), e.g. 2/3 on
    /// the second of three machines; `skilleval merge` puts the N run folders together
    #[arg(long, value_parser = Shard::parse, value_name = "I/N")]
    pub shard: Option<Shard>,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Also write JUnit XML here: one test case per category and per law of the wording
    /// comparison (and the total), failed when its verdict is `worse`
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print where the run's time and tokens went
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
}

impl RunArgs {
    /// The run these arguments ask for. The model's chat format comes from its metadata; a
    /// pack's `chat_format` insists on another, and `--family` on the command line overrides
    /// both.
    pub fn into_options(self) -> anyhow::Result<RunOptions> {
        let mut pack = Pack::load(&self.pack)?;
        if self.model.family.is_some() {
            pack.chat_format = None;
        }
        let mut opts = RunOptions::new(pack);
        opts.variant = self.variant;
        opts.skills_dir = self.skills_dir;
        opts.corpus = self.corpus;
        opts.repeats = self.repeats;
        opts.seed = self.seed;
        opts.categories = self.category;
        opts.limit = self.limit;
        opts.record = record_mode(self.record);
        opts.temperature = self.temperature;
        opts.top_k = self.top_k;
        opts.top_p = self.top_p;
        opts.output_root = self.output;
        opts.resume = self.resume;
        opts.progress = true;
        opts.control = !self.no_control;
        opts.parallel = self.parallel.resolve();
        opts.shard = self.shard;
        Ok(opts)
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    let (json, profile_asked, fail_on) = (args.json, args.profile, args.fail_on);
    let junit = args.junit.clone();
    if let Some(path) = &junit {
        super::report::check_junit_path(path)?;
    }
    let (model, backend) = (args.model.clone(), args.backend.clone());
    backend.server_options(&model)?;
    let opts = args.into_options()?;
    // Fail on pack, corpus, variant and fixture mistakes before the model loads.
    let prepared = runner::prepare(&opts)?;
    let mut model = backend.open(&model, opts.parallel)?;
    let result = runner::run_prepared(model.backend(), &prepared)?;
    if let Some(path) = &junit {
        super::report::write_junit(path, &result.summary, &result.run_id)?;
    }
    let profile = &result.profile;
    if json {
        println!("{}", serde_json::to_string_pretty(&result.summary)?);
    } else {
        println!("{}", report::table(&result.summary));
        println!("{}", profile.line());
        println!("run {} → {}", result.run_id, result.dir.display());
    }
    if profile_asked {
        let text = profile.table()
            + &profile
                .engine
                .as_ref()
                .map(|s| s.table())
                .unwrap_or_default();
        // Beside a JSON summary, on stderr so that stdout stays JSON; the summary line with it,
        // since the table above was not printed.
        if json {
            eprint!("{}\n{text}", profile.line());
        } else {
            print!("{text}");
        }
    }
    Ok(if fail_on.is_some() && stats::any_worse(&result.summary) {
        EXIT_WORSE
    } else {
        0
    })
}
