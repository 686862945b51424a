//! `skilleval doctor`: checks that a run from the current folder can start and says what it
//! found, one line per item: the model file and its sha256, whether llama.cpp loads it, the
//! binding, the CPU features the build uses, the threads, whether every pack `--pack NAME`
//! reaches from here (`packs/` in this folder, then the shipped packs) loads its skills, corpus
//! and fixtures, and whether the run folders can be written. Any problem makes the exit code 1.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::ModelArgs;
use crate::eval::judge;
use crate::eval::pack::Pack;
use crate::eval::replay::{self, RecordMode};
use crate::harness::backend::llama::{self, LlamaBackend};
use crate::harness::backend::Backend;
use crate::model_path;

const EXAMPLES: &str = "Examples:
  skilleval doctor
  skilleval doctor --model smollm2
  skilleval doctor --packs-dir ../my-packs --model models/other.gguf";

/// Where a run writes its folder unless `--output` says otherwise.
const RUNS_DIR: &str = "output";

#[derive(Args, Debug)]
#[command(after_long_help = EXAMPLES)]
pub struct DoctorArgs {
    /// Folder whose sub-folders with a pack.toml are checked, instead of the packs `--pack NAME`
    /// reaches from here (`packs/` in this folder, then the shipped packs)
    #[arg(long)]
    pub packs_dir: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Lines printed and problems counted.
#[derive(Default)]
struct Checkup {
    problems: usize,
}

impl Checkup {
    fn ok(&self, item: &str, detail: impl AsRef<str>) {
        crate::outln!("{item:<12} {}", detail.as_ref());
    }

    fn problem(&mut self, item: &str, detail: impl AsRef<str>) {
        self.problems += 1;
        crate::outln!("{item:<12} PROBLEM: {}", detail.as_ref());
    }
}

pub fn run(args: DoctorArgs) -> anyhow::Result<u8> {
    let mut up = Checkup::default();
    check_model(&mut up, &args.model);
    up.ok(
        "binding",
        format!("llama-cpp-2 {}", crate::LLAMA_CPP_2_VERSION),
    );
    up.ok("cpu", cpu_features());
    let threads = match args.model.threads {
        0 => format!(
            "{} (one per core; --threads sets another)",
            llama::available_threads()
        ),
        n => format!("{n} (--threads)"),
    };
    up.ok("threads", threads);
    match &args.packs_dir {
        Some(dir) => check_packs(&mut up, dir),
        None => check_reachable_packs(&mut up),
    }
    check_runs_dir(&mut up, Path::new(RUNS_DIR));
    match up.problems {
        0 => {
            crate::outln!("doctor: no problem found");
            Ok(0)
        }
        n => {
            crate::outln!("doctor: {n} problem(s)");
            Ok(1)
        }
    }
}

fn check_model(up: &mut Checkup, args: &ModelArgs) {
    let path = model_path::resolve(args.model.clone());
    let known = model_path::known_model_at(&path);
    let size = match std::fs::metadata(&path) {
        Ok(meta) => meta.len(),
        Err(e) => {
            let fix = match &known {
                Some(m) => format!("run `bash scripts/setup.sh --model {}`", m.name),
                None => "pass --model with a GGUF file".to_string(),
            };
            up.problem("model", format!("{}: {e}; {fix}", path.display()));
            return;
        }
    };
    let name = known
        .as_ref()
        .map_or("not in models.tsv", |m| m.name.as_str());
    up.ok(
        "model",
        format!(
            "{} ({name}, {:.0} MiB)",
            path.display(),
            size as f64 / (1024.0 * 1024.0)
        ),
    );
    match (crate::eval::digest::file_sha256(&path), &known) {
        (Err(e), _) => up.problem("sha256", format!("cannot read the file: {e}")),
        (Ok(sha), Some(m)) if sha == m.sha256 => up.ok("sha256", format!("ok ({sha})")),
        (Ok(sha), Some(m)) => up.problem(
            "sha256",
            format!(
                "{sha}, but {} should have {}; run `bash scripts/setup.sh --model {}` after removing the file",
                m.name, m.sha256, m.name
            ),
        ),
        (Ok(sha), None) => up.ok("sha256", format!("{sha} (no expected value to compare)")),
    }
    match LlamaBackend::load(&args.options()) {
        Ok(backend) => {
            let info = backend.info();
            up.ok(
                "load",
                format!(
                    "ok in {:.2} s: {} ({}), chat format {:?}, context {} tokens",
                    info.load_secs,
                    info.model_name.unwrap_or_default(),
                    info.architecture.unwrap_or_default(),
                    backend.family(),
                    info.n_ctx
                ),
            );
        }
        Err(e) => up.problem("load", format!("{e:#}")),
    }
}

/// The CPU features the llama.cpp build uses.
fn cpu_features() -> String {
    match llama::build_features() {
        Ok(features) if !features.is_empty() => features.join(" "),
        Ok(_) => "unknown".into(),
        Err(_) => "unknown (llama.cpp did not start)".into(),
    }
}

/// The packs `--pack NAME` reaches from the current folder: each of `packs/` here, then each
/// shipped pack no folder here shadows. No `packs/` here is no problem.
fn check_reachable_packs(up: &mut Checkup) {
    let here = Path::new("packs");
    let mut local: Vec<String> = match std::fs::read_dir(here) {
        Ok(entries) => entries
            .flatten()
            .filter(|e| e.path().join("pack.toml").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    local.sort();
    let shipped: Vec<&str> = crate::eval::pack::source::shipped_names()
        .into_iter()
        .filter(|name| !local.iter().any(|l| l == name))
        .collect();
    up.ok(
        "packs",
        format!(
            "{} in packs/ here; shipped with skilleval: {}",
            local.len(),
            if shipped.is_empty() {
                "none besides those".to_string()
            } else {
                shipped.join(", ")
            }
        ),
    );
    for name in &local {
        let label = format!("pack {name}");
        match check_pack(&here.join(name)) {
            Ok(detail) => up.ok(&label, detail),
            Err(e) => up.problem(&label, format!("{e:#}")),
        }
    }
    for name in shipped {
        let label = format!("pack {name}");
        let checked = crate::eval::pack::source::shipped_pack_file(name).and_then(|file| {
            let file = file.ok_or_else(|| anyhow::anyhow!("not shipped"))?;
            check_pack(file.parent().unwrap_or(Path::new(".")))
        });
        match checked {
            Ok(detail) => up.ok(&label, format!("{detail} (shipped)")),
            Err(e) => up.problem(&label, format!("{e:#}")),
        }
    }
}

/// A run writes its folder under `output/` here: that folder, or the current one when it does
/// not exist yet, must take a new file.
fn check_runs_dir(up: &mut Checkup, runs: &Path) {
    let dir = if runs.exists() { runs } else { Path::new(".") };
    let probe = dir.join(format!(".skilleval-doctor-{}", std::process::id()));
    match std::fs::File::create_new(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            up.ok(
                "runs",
                format!("{}/ is writable (run folders go there)", runs.display()),
            );
        }
        Err(e) => up.problem(
            "runs",
            format!(
                "{}: cannot write: {e}; run from a folder you can write to, or pass --output",
                dir.display()
            ),
        ),
    }
}

fn check_packs(up: &mut Checkup, dir: &Path) {
    let mut packs: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && crate::base::input::is_present(&p.join("pack.toml")))
            .collect(),
        Err(e) => {
            up.problem("packs", format!("{}: {e}", dir.display()));
            return;
        }
    };
    packs.sort();
    if packs.is_empty() {
        up.problem("packs", format!("{}: no pack folder", dir.display()));
    }
    for path in packs {
        let label = format!(
            "pack {}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        match check_pack(&path) {
            Ok(detail) => up.ok(&label, detail),
            Err(e) => up.problem(&label, format!("{e:#}")),
        }
    }
}

/// Loads a pack's skills, corpus (checking the fields its laws read) and fixtures.
fn check_pack(path: &Path) -> anyhow::Result<String> {
    let pack = Pack::load(&path.display().to_string())?;
    pack.skills(None)?;
    let samples = pack.corpus(None)?;
    for s in &samples {
        judge::check_sample(&pack.laws, &s.category, &s.fields).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}: sample {:?}: {}",
                pack.corpus_path.display(),
                s.line,
                s.id,
                e.replace('\n', "; ")
            )
        })?;
    }
    let fixtures = replay::load_fixtures(&pack, RecordMode::Off)?;
    Ok(format!(
        "ok: skill {}, {} samples in {} categories, {} fixtures",
        pack.skill,
        samples.len(),
        pack.categories.len(),
        fixtures.len()
    ))
}
