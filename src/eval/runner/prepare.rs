//! A run's inputs built and checked before the model loads: the arms' skills trees, the samples,
//! the tools answered from fixtures, the sampling settings and the digests of every input, so
//! that a mistake costs no model load.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{anyhow, bail};

use super::options::RunOptions;
use super::skill_trees::{skill_trees, SkillTrees};
use crate::eval::corpus::Sample;
use crate::eval::judge;
use crate::eval::pack::Pack;
use crate::eval::plan;
use crate::eval::record::manifest::{self, variant_label};
use crate::eval::record::{folder, journal};
use crate::eval::replay;
use crate::eval::reuse::BaselineSource;
use crate::harness::backend::Sampling;
use crate::harness::tools::Registry;

/// The samples the run selects, and the ids of the whole corpus.
fn select_samples(opts: &RunOptions) -> anyhow::Result<(Vec<Sample>, BTreeSet<String>)> {
    let mut samples = opts.pack.corpus(opts.corpus.as_deref())?;
    let corpus_ids = samples.iter().map(|s| s.id.clone()).collect();
    if !opts.categories.is_empty() {
        for c in &opts.categories {
            if !opts.pack.categories.contains(c) {
                bail!(
                    "--category {c:?}: the pack has no such category (it has: {})",
                    opts.pack.categories.join(", ")
                );
            }
        }
        samples.retain(|s| opts.categories.contains(&s.category));
    }
    if let Some(limit) = opts.limit {
        samples = plan::limit_round_robin(samples, limit);
    }
    if samples.is_empty() {
        bail!("no samples to run");
    }
    let corpus_path = opts.corpus.as_deref().unwrap_or(&opts.pack.corpus_path);
    for s in &samples {
        judge::check_sample(&opts.pack.laws, &s.category, &s.fields).map_err(|e| {
            anyhow!(
                "{}:{}: sample {:?}: {}",
                corpus_path.display(),
                s.line,
                s.id,
                e.replace('\n', "; ")
            )
        })?;
    }
    Ok((samples, corpus_ids))
}

/// A run's inputs, built and checked once, before the model loads: the arms' skills trees, the
/// samples, the tools answered from fixtures and the sampling settings.
pub struct Prepared {
    pub opts: RunOptions,
    pub trees: SkillTrees,
    pub samples: Vec<Sample>,
    pub registry: Registry,
    pub sampling: Sampling,
    /// The digests of the run's inputs, taken before the model loads.
    pub inputs: manifest::InputHashes,
}

/// Every check on the inputs a run does before it asks the model anything: the pack's skills
/// tree, the variant, the corpus, `--category`, `--limit`, the fields laws read, `--repeats` and
/// the fixtures. The CLI calls it before loading the model, so that a mistake costs no load.
pub fn prepare(opts: &RunOptions) -> anyhow::Result<Prepared> {
    let pack = &opts.pack;
    crate::eval::pack::check_sampling_flags(opts.temperature, opts.top_k, opts.top_p)?;
    check_skills_dir_scripts(opts)?;
    let trees = skill_trees(pack, opts.skills_dir.as_deref(), &opts.variants)?;
    let (samples, corpus_ids) = select_samples(opts)?;
    if opts.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    plan::check_size(
        samples.len(),
        crate::eval::arm::in_plan_order(opts.control, trees.variant_count()).len(),
        opts.repeats,
    )?;
    if let Some(shard) = opts.shard {
        shard.check_against(samples.len())?;
    }
    let store = Arc::new(replay::load_fixtures(pack, opts.record)?);
    replay::check_http_mcp_servers(pack, opts.record)?;
    if let Some(run_id) = &opts.resume {
        folder::check_resume(&opts.output_root, run_id)?;
        // The journal is checked against the plan the run began with; a flag that changes the
        // plan (--seed, --variant…) is named by the manifest's own comparison after the load.
        let dir = opts.output_root.join(run_id);
        let manifest_path = dir.join(folder::MANIFEST_FILE);
        if std::fs::symlink_metadata(&manifest_path).is_ok() {
            let began = manifest::read(&manifest_path)?;
            // A sequential run plans its looks over its repeats: another --repeats would be
            // another plan, its looks and spending no longer the run's.
            if began.sequential.is_some() && began.repeats != opts.repeats {
                bail!(
                    "--resume {run_id}: {}: field `repeats`: the sequential run began with --repeats {}, and its looks are planned over them; resume it with --repeats {} (this command gives {})",
                    manifest_path.display(),
                    began.repeats,
                    began.repeats,
                    opts.repeats
                );
            }
            let plan = began.plan_shape(Some(corpus_ids));
            journal::read_in_plan(&dir.join(folder::JOURNAL_FILE), &plan)
                .map_err(|e| anyhow!("--resume: {e}"))?;
        }
    }
    check_output_paths(opts)?;
    check_variant_labels(opts)?;
    // Taken before the model loads: an unreadable input fails here, not after the load.
    let inputs = pack.input_hashes(
        &opts.skills_dir.clone().unwrap_or(pack.skills_dir.clone()),
        &opts.variants,
        opts.corpus.as_deref().unwrap_or(&pack.corpus_path),
    )?;
    let registry = replay::build_registry(&pack.tools, store, opts.record, opts.live.clone());
    check_law_arguments(pack, &registry)?;
    let mut sampling = pack.sampling;
    sampling.temperature = opts.temperature.unwrap_or(sampling.temperature);
    sampling.top_k = opts.top_k.unwrap_or(sampling.top_k);
    sampling.top_p = opts.top_p.unwrap_or(sampling.top_p);
    Ok(Prepared {
        opts: opts.clone(),
        trees,
        samples,
        registry,
        sampling,
        inputs,
    })
}

/// The folders a run will write to and read its baseline from, checked before the model loads:
/// the output folder is created (or must be one), and `--baseline-from` must name a run folder
/// with a manifest.
fn check_output_paths(opts: &RunOptions) -> anyhow::Result<()> {
    let root = &opts.output_root;
    if root.exists() && !root.is_dir() {
        bail!("--output {}: is not a folder", root.display());
    }
    std::fs::create_dir_all(root)
        .map_err(|e| anyhow!("--output {}: cannot create folder: {e}", root.display()))?;
    // A folder the run cannot write would fail after the load, at the run folder.
    crate::base::write::check_writable_folder(root)
        .map_err(|e| anyhow!("--output {}: cannot write in it: {e}", root.display()))?;
    if let BaselineSource::Run(run) = &opts.baseline_source {
        if opts.resume.is_some() {
            bail!("--baseline-from {run}: a resumed run keeps the baseline it began with; drop --baseline-from");
        }
        let dir = folder::find(run, root).map_err(|e| anyhow!("--baseline-from {e}"))?;
        let manifest = dir.join(folder::MANIFEST_FILE);
        if !manifest.is_file() {
            bail!(
                "--baseline-from {run}: {} does not exist",
                manifest.display()
            );
        }
    }
    Ok(())
}

/// Refuses, before the model loads, a skill body or a sample's messages that cannot fit a
/// context of `ctx` tokens whatever the tokenizer makes of them: a text of n bytes needs at least
/// n / `longest_token_bytes` tokens. Anything that passes here and still does not fit errors in
/// its units, which the run then reports.
pub fn check_fits_context(
    run: &Prepared,
    ctx: u32,
    longest_token_bytes: usize,
) -> anyhow::Result<()> {
    let fewest = |bytes: usize| bytes.div_ceil(longest_token_bytes.max(1));
    let pack = &run.opts.pack;
    let mut trees = vec![&run.trees.baseline];
    trees.extend(&run.trees.variants);
    for tree in trees {
        if let Some(skill) = tree.get(&pack.skill) {
            let tokens = fewest(skill.body.len());
            if tokens > ctx as usize {
                bail!(
                    "{}: the skill's body is {} bytes, at least {tokens} tokens of this model, more than the context of {ctx} holds (--ctx)",
                    skill.source.display(),
                    skill.body.len()
                );
            }
        }
    }
    let corpus = run.opts.corpus.as_deref().unwrap_or(&pack.corpus_path);
    for sample in &run.samples {
        let bytes: usize = sample.messages.iter().map(|m| m.content.len()).sum();
        let tokens = fewest(bytes);
        if tokens > ctx as usize {
            bail!(
                "{}:{}: sample {:?}: its messages are {bytes} bytes, at least {tokens} tokens of this model, more than the context of {ctx} holds (--ctx)",
                corpus.display(),
                sample.line,
                sample.id
            );
        }
    }
    Ok(())
}

/// A law that reads an argument the tool's schema does not have could never pass: refused,
/// naming the schema's parameters.
fn check_law_arguments(pack: &Pack, registry: &Registry) -> anyhow::Result<()> {
    for law in &pack.laws {
        let Some((tool, argument)) = law.check().argument() else {
            continue;
        };
        let Some(properties) = registry
            .get(tool)
            .and_then(|t| t.parameters.get("properties"))
            .and_then(|p| p.as_object())
        else {
            continue;
        };
        if !properties.contains_key(argument) {
            let names: Vec<&str> = properties.keys().map(String::as_str).collect();
            bail!(
                "{}: law `{}`: field `argument`: tool {tool:?} has no argument {argument:?} (its parameters: {})",
                pack.file.display(),
                law.name,
                names.join(", ")
            );
        }
    }
    Ok(())
}

/// A skill's scripts are offered from the pack's own skills tree, read when the pack loads: a
/// `--skills-dir` whose skills carry scripts would run its SKILL.md files with the pack's
/// scripts, unseen, so it is refused.
fn check_skills_dir_scripts(opts: &RunOptions) -> anyhow::Result<()> {
    let Some(dir) = &opts.skills_dir else {
        return Ok(());
    };
    let found = crate::eval::pack::scripts::find_scripts(dir)?;
    if let Some(script) = found.first() {
        bail!(
            "--skills-dir {}: {} is a skill's script, and scripts are offered from the pack's own skills tree ({}); give that tree as the pack's `skills_dir` instead",
            dir.display(),
            script.path.display(),
            opts.pack.skills_dir.display()
        );
    }
    Ok(())
}

/// Two variants the report would head alike (by file name) are refused.
fn check_variant_labels(opts: &RunOptions) -> anyhow::Result<()> {
    let files = &opts.variants;
    for (i, a) in files.iter().enumerate() {
        if let Some(b) = files[..i]
            .iter()
            .find(|b| variant_label(b) == variant_label(a))
        {
            bail!(
                "--variant {} and {}: both are named {}, and the report heads its columns by file name; rename one",
                b.display(),
                a.display(),
                variant_label(a)
            );
        }
    }
    Ok(())
}
