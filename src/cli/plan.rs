//! `skilleval plan`: the checks a skill change needs, from a git diff and the repository's
//! packs, each with its provenance; the skills no pack measures and the refused gates. With
//! `--run`, the checks are carried out by this same program, against the base's files laid out
//! in a temporary folder, and one report of the whole PR is written.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use clap::Args;

use crate::eval::gate::{self, Outcome, Plan};

pub const EXAMPLES: &str = "Examples:
  skilleval plan --base origin/main   # the checks this branch needs, against a revision you name
  skilleval plan --strict --json      # exit 1 when a changed skill is not covered; JSON for CI
  skilleval plan --run --fail-on worse -- --model m.gguf --limit 20   # carry the plan out";

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The revision to compare with (default: the merge base of HEAD and the default branch)
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// A folder inside the repository
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Exit 1 when a changed skill the model reads is measured by no pack
    #[arg(long)]
    pub strict: bool,
    /// Print the plan as JSON
    #[arg(long, conflicts_with = "run")]
    pub json: bool,
    /// Carry the plan out: each `score`, `run` and `check` it names, against the base's files
    /// laid out in a temporary folder; one report.md for the whole PR
    #[arg(long)]
    pub run: bool,
    /// With --run: the folder the runs and the PR's report go under (from the repository's root
    /// when relative)
    #[arg(long, default_value = "output", requires = "run")]
    pub output: PathBuf,
    /// With --run: passed to every `score` and `run` (`worse`, `no-skill-effect`)
    #[arg(long, value_name = "WHAT", requires = "run")]
    pub fail_on: Option<String>,
    /// With --run: each `score` and `run` writes its JUnit XML into this folder
    #[arg(long, value_name = "DIR", requires = "run")]
    pub junit_dir: Option<PathBuf>,
    /// With --run: repeats of every `run` (as run's --repeats)
    #[arg(long, value_name = "N", requires = "run")]
    pub repeats: Option<u32>,
    /// With --run, after `--`: flags given to every `score` and `run` (the model, the backend,
    /// --limit)
    #[arg(last = true, value_name = "FLAGS")]
    pub flags: Vec<String>,
}

pub fn run(args: PlanArgs) -> anyhow::Result<u8> {
    if !args.flags.is_empty() && !args.run {
        bail!("flags after `--` are for the commands of --run; add --run");
    }
    let plan = gate::plan(&gate::Options {
        dir: args.repo.clone(),
        base: args.base.clone(),
    })?;
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&plan)?);
        return Ok(plan.exit_code(args.strict));
    }
    crate::out!("{}", plan.render_text());
    let code = plan.exit_code(args.strict);
    if !args.run {
        return Ok(code);
    }
    if code != 0 {
        bail!("--run: the plan is refused above; nothing was run");
    }
    carry_out(&plan, &args)
}

/// A folder under the system's temporary folder, removed when dropped.
struct TempFolder(PathBuf);

impl TempFolder {
    fn new() -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("skilleval-base-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
        Ok(TempFolder(dir))
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn carry_out(plan: &Plan, args: &PlanArgs) -> anyhow::Result<u8> {
    let program = std::env::current_exe().map_err(|e| anyhow!("cannot find skilleval: {e}"))?;
    let output = lexical(&plan.root.join(&args.output));
    // Run folders belong in an output folder, never in git's own or in a pack the plan reads.
    let forbidden =
        std::iter::once(".git".to_string()).chain(plan.checks.iter().map(|c| c.pack.clone()));
    for dir in forbidden {
        if output.starts_with(lexical(&plan.root.join(&dir))) {
            anyhow::bail!(
                "--output {}: inside {dir}, which `plan --run` never writes to; give a folder of its own",
                args.output.display()
            );
        }
    }
    let short = &plan.base[..plan.base.len().min(12)];
    let pr_dir = output.join(format!("pr-{short}"));
    std::fs::create_dir_all(&pr_dir).map_err(|e| anyhow!("{}: {e}", pr_dir.display()))?;
    // An interrupt is passed on to the command running and then ends the plan, after the base
    // checkout is removed (it would be left in the temporary folder if the process just died).
    crate::base::child::defer_ending_signals();
    let interrupted = || crate::base::child::ending_signal().map(|signum| 128 + signum as u8);
    let base = TempFolder::new()?;
    gate::git::lay_out(&plan.root, &plan.base, &base.0)?;
    if let Some(status) = interrupted() {
        return Ok(status);
    }
    let base_text = base.0.to_string_lossy().into_owned();
    let mut outcomes = Vec::new();
    for (index, check) in plan.checks.iter().enumerate() {
        for argv in &check.argv {
            let mut argv: Vec<String> = argv
                .iter()
                .map(|a| a.replace("$BASE", &base_text))
                .collect();
            let command = argv[0].clone();
            let writes_run = command == "score" || command == "run";
            let run_root = pr_dir.join(format!("{index}-{command}"));
            if writes_run {
                argv.extend(["--output".into(), run_root.to_string_lossy().into_owned()]);
                if let Some(what) = &args.fail_on {
                    argv.extend(["--fail-on".into(), what.clone()]);
                }
                if let Some(dir) = &args.junit_dir {
                    let file = dir.join(format!("{index}-{command}.xml"));
                    argv.extend(["--junit".into(), file.to_string_lossy().into_owned()]);
                }
                if let (Some(repeats), "run") = (args.repeats, command.as_str()) {
                    argv.extend(["--repeats".into(), repeats.to_string()]);
                }
                argv.extend(args.flags.iter().cloned());
            }
            let root_prefix = format!("{}/", plan.root.display());
            let shown = gate::shell_line(&argv)
                .replace(&base_text, "$BASE")
                .replace(&root_prefix, "");
            crate::outln!("plan --run: {shown}");
            let mut child = std::process::Command::new(&program)
                .args(&argv)
                .current_dir(&plan.root)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| anyhow!("cannot start {}: {e}", program.display()))?;
            crate::base::child::forward_signals_to(Some(child.id()));
            // Its stderr is passed on as it comes, and its last line kept for the report.
            let last_error_line = child.stderr.take().and_then(pass_on_keeping_last_line);
            let status = child
                .wait()
                .map_err(|e| anyhow!("{}: {e}", program.display()))?;
            crate::base::child::forward_signals_to(None);
            if let Some(status) = interrupted() {
                eprintln!("plan --run: interrupted; the base's files are removed, the rest of the plan is not carried out");
                return Ok(status);
            }
            let run_folder = writes_run.then(|| newest_run(&run_root)).flatten();
            let report = run_folder
                .as_ref()
                .and_then(|f| std::fs::read_to_string(f.join("report.md")).ok());
            let vacuous = match (&run_folder, command.as_str()) {
                (Some(folder), "run") => vacuous_control(folder),
                _ => None,
            };
            outcomes.push(Outcome {
                check: index,
                command: shown,
                exit: status.code(),
                run_folder,
                report,
                last_error_line,
                vacuous,
            });
        }
    }
    let report_file = pr_dir.join("report.md");
    crate::base::write::write_atomic(&report_file, plan.render_pr_report(&outcomes).as_bytes())
        .map_err(|e| anyhow!("{}: {e}", report_file.display()))?;
    crate::outln!("plan --run: the PR's report: {}", report_file.display());
    let mut worst = outcomes
        .iter()
        .map(|o| match o.exit {
            Some(0) => 0,
            Some(code) => u8::try_from(code).unwrap_or(1),
            None => 1,
        })
        .max()
        .unwrap_or(0);
    let vacuous = outcomes.iter().filter(|o| o.vacuous.is_some()).count();
    if vacuous > 0 && args.fail_on.is_some() {
        eprintln!("plan --run: exit 1 (--fail-on): {vacuous} run(s) could not fail, every law held in the control arm (the report says which)");
        worst = worst.max(1);
    }
    Ok(worst)
}

/// `control::vacuous_control`, a journal it cannot read only warned of: the run's own report
/// stands.
fn vacuous_control(run_folder: &Path) -> Option<String> {
    gate::control::vacuous_control(run_folder).unwrap_or_else(|e| {
        eprintln!("warning: plan --run: {e}");
        None
    })
}

/// Copies a child's stderr to ours as it comes (progress lines included) and returns its last
/// non-empty line.
fn pass_on_keeping_last_line(mut stderr: std::process::ChildStderr) -> Option<String> {
    use std::io::{Read, Write};
    let mut buffer = [0u8; 4096];
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let n = match stderr.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let _ = std::io::stderr().write_all(&buffer[..n]);
        tail.extend_from_slice(&buffer[..n]);
        if tail.len() > 16_384 {
            tail.drain(..tail.len() - 8_192);
        }
    }
    // The error line, where the command wrote one, else its last line.
    let text = String::from_utf8_lossy(&tail);
    let lines: Vec<&str> = text
        .split(['\r', '\n'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .rfind(|l| l.starts_with("error"))
        .or(lines.last())
        .map(|l| l.to_string())
}

/// The run folder a command wrote under `root` (the newest, should there be several).
fn newest_run(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("report.md").is_file())
        .max()
}

/// `path` with `.` and `..` taken out by its words alone, as a shell would read it.
fn lexical(path: &std::path::Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
