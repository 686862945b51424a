//! What a run is asked for: every setting of `skilleval run` as plain data, with the defaults a
//! library caller starts from. Nothing here reads a file or loads a model.

use std::path::PathBuf;
use std::time::Duration;

use crate::eval::pack::Pack;
use crate::eval::replay::{LiveServices, RecordMode};
use crate::eval::reuse::BaselineSource;
use crate::eval::shard::Shard;
use crate::eval::spending::Spending;

#[derive(Clone)]
pub struct RunOptions {
    pub pack: Pack,
    pub skills_dir: Option<PathBuf>,
    /// The variants, each compared with the same baseline under the same seeds; none for an
    /// A/A run (the baseline against a second draw of itself).
    pub variants: Vec<PathBuf>,
    pub corpus: Option<PathBuf>,
    pub repeats: u32,
    pub seed: u64,
    pub categories: Vec<String>,
    pub limit: Option<usize>,
    pub record: RecordMode,
    pub temperature: Option<f32>,
    pub top_k: Option<i32>,
    pub top_p: Option<f32>,
    pub output_root: PathBuf,
    pub resume: Option<String>,
    /// Show progress on stderr: a bar on a terminal, else a plain line every 10 s.
    pub progress: bool,
    pub live: LiveServices,
    /// Units run at once, each on its own handle of a backend that serves many callers.
    pub parallel: usize,
    /// Run the control arm (the skill with an empty body), to measure the skill's own effect.
    pub control: bool,
    /// Run only this slice of the plan (`--shard I/N`); `merge` puts the slices together.
    pub shard: Option<Shard>,
    /// Where the baseline may come from: an earlier run with the same inputs, or run anew
    /// (the default here; the CLI looks in its cache of earlier runs).
    pub baseline_source: BaselineSource,
    /// Run in waves and stop when the verdicts are known ([`waves`]); `repeats` is the most.
    pub sequential: Option<Sequential>,
}

impl RunOptions {
    pub fn new(pack: Pack) -> Self {
        RunOptions {
            pack,
            skills_dir: None,
            variants: Vec::new(),
            corpus: None,
            repeats: 3,
            seed: 0,
            categories: Vec::new(),
            limit: None,
            record: RecordMode::Off,
            temperature: None,
            top_k: None,
            top_p: None,
            output_root: PathBuf::from("output"),
            resume: None,
            progress: false,
            live: LiveServices::default(),
            parallel: 1,
            control: true,
            shard: None,
            baseline_source: BaselineSource::Off,
            sequential: None,
        }
    }
}

/// What a sequential run asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sequential {
    pub spending: Spending,
    /// Start no wave that would not end within this much time from the first unit.
    pub budget: Option<Duration>,
}
