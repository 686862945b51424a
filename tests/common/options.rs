//! Options for the runs and benches the tests start, with the defaults most of them share; a
//! test sets what it is about on top.

use std::path::Path;

use skilleval::bench::run::BenchOptions;
use skilleval::bench::Mode;
use skilleval::eval::pack::Pack;
use skilleval::eval::runner::RunOptions;
use skilleval::harness::backend::Sampling;

/// A run of the pack in `pack_dir`, `repeats` times, writing its folder under `output`; every
/// other option as the command line leaves it.
pub fn run_options(pack_dir: &Path, output: &Path, repeats: u32) -> RunOptions {
    let pack = Pack::load(pack_dir.to_str().expect("a UTF-8 pack path")).expect("the pack loads");
    let mut opts = RunOptions::new(pack);
    opts.output_root = output.to_path_buf();
    opts.repeats = repeats;
    opts
}

/// [`run_options`] with the pack's own `variant.md` as its one variant.
pub fn variant_run_options(pack_dir: &Path, output: &Path, repeats: u32) -> RunOptions {
    let mut opts = run_options(pack_dir, output, repeats);
    opts.variants = vec![pack_dir.join("variant.md")];
    opts
}

/// A bench in `mode`, once, one entry at a time, writing under `output` as model `scripted`:
/// seed 1, 256 tokens, default sampling and call syntax, and no BFCL helper.
pub fn bench_options(mode: Mode, output: &Path) -> BenchOptions {
    BenchOptions {
        mode,
        call_format: None,
        max_tokens: 256,
        sampling: Sampling::default(),
        seed: 1,
        repeats: 1,
        limit: None,
        ids: Vec::new(),
        output_root: output.to_path_buf(),
        result_model: "scripted".into(),
        progress: false,
        parallel: 1,
        helper: None,
    }
}
