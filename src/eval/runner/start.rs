//! The start of a run: its folder (new, or the one `--resume` names), and the manifest of
//! everything that enters its results.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::options::RunOptions;
use super::prepare::Prepared;
use crate::eval::digest::{file_sha256, git_revision, sha256_hex};
use crate::eval::record::manifest::{Manifest, VariantRecord};
use crate::eval::record::{RunFolder, SequentialRecord};
use crate::eval::shard::ShardRecord;
use crate::harness::backend::Backend;
use crate::harness::skills::SkillTree;

/// Says where the run goes, and what Ctrl-C will say: how to resume it.
pub fn announce(opts: &RunOptions, folder: &RunFolder) {
    if opts.progress {
        eprintln!("run {} → {}", folder.run_id, folder.dir.display());
        #[cfg(unix)]
        crate::exec::interrupt::say_on_interrupt(&format!(
            "interrupted: run {id} keeps every unit it finished; the same command with --resume {id} goes on",
            id = folder.run_id
        ));
    }
}

/// Everything that enters a run's results, for `manifest.json`.
pub fn manifest(run: &Prepared, backend: &dyn Backend, run_id: &str) -> anyhow::Result<Manifest> {
    let (opts, pack, trees) = (&run.opts, &run.opts.pack, &run.trees);
    let corpus_path = opts.corpus.clone().unwrap_or(pack.corpus_path.clone());
    let corpus_text = crate::base::input::read_input_to_string(&corpus_path).unwrap_or_default();
    let info = backend.info();
    let body = |tree: &SkillTree| {
        sha256_hex(
            tree.get(&pack.skill)
                .map(|s| s.body.as_str())
                .unwrap_or("")
                .as_bytes(),
        )
    };
    let skills_dir = opts.skills_dir.clone().unwrap_or(pack.skills_dir.clone());
    Ok(Manifest {
        run_id: run_id.to_string(),
        skilleval_version: env!("CARGO_PKG_VERSION").into(),
        llama_cpp_2_version: crate::LLAMA_CPP_2_VERSION.into(),
        model_sha256: info
            .model_path
            .as_ref()
            .and_then(|p| file_sha256(Path::new(p)).ok()),
        backend: info,
        pack: pack.name.clone(),
        pack_file: std::fs::canonicalize(&pack.file)
            .ok()
            .map(|file| file.display().to_string()),
        skill: pack.skill.clone(),
        skills_git_revision: git_revision(&skills_dir),
        skills_dir: skills_dir.display().to_string(),
        // The manifest keeps the first variant apart from the further ones, as it always has.
        variant: opts.variants.first().map(|p| p.display().to_string()),
        baseline_body_sha256: body(&trees.baseline),
        variant_body_sha256: body(trees.first_variant()),
        more_variants: opts
            .variants
            .iter()
            .skip(1)
            .zip(&trees.variants[1..])
            .map(|(path, tree)| VariantRecord {
                path: path.display().to_string(),
                body_sha256: body(tree),
            })
            .collect(),
        control: opts.control,
        control_removes: opts.pack.control,
        control_body_sha256: opts.control.then(|| body(&trees.control)),
        corpus: corpus_path.display().to_string(),
        corpus_file: std::fs::canonicalize(&corpus_path)
            .ok()
            .map(|file| file.display().to_string()),
        corpus_sha256: sha256_hex(corpus_text.as_bytes()),
        samples: run.samples.len(),
        repeats: opts.repeats,
        run_seed: opts.seed,
        sampling: run.sampling,
        budgets: pack.budgets,
        call_format: format!(
            "{:?}",
            pack.call_format
                .unwrap_or(backend.family().default_call_format())
        ),
        skill_examples: pack.skill_examples,
        long_tool_output: pack.long_tool_output,
        record: format!("{:?}", opts.record),
        parallel: opts.parallel.max(1),
        started_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        inputs: Some(run.inputs.clone()),
        shard: opts.shard.map(|shard| ShardRecord {
            index: shard.index,
            count: shard.count,
            sample_ids: run.samples.iter().map(|s| s.id.clone()).collect(),
        }),
        merged_from: Vec::new(),
        baseline_from: None,
        baseline_rejudged: 0,
        rejudged: None,
        purpose_laws: pack
            .laws
            .iter()
            .filter(|l| l.purpose)
            .map(|l| l.name.clone())
            .collect(),
        law_tools: crate::eval::report::pinned::law_tools(&pack.laws),
        sequential: opts
            .sequential
            .map(|s| SequentialRecord::new(opts.repeats, s.spending, s.budget)),
    })
}
