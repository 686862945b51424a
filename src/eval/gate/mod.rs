//! `skilleval plan`: the checks a skill change needs, read from a git diff and the repository's
//! own packs, never from a default. Each changed path gets a kind (a skill's text the model
//! reads, front matter it never sees, a tool's program, a pack's corpus or laws), each planned
//! check its provenance (the `pack.toml` and line that name the skill), and a changed skill no
//! pack measures is named. A check that could not fail for the change is refused.

mod change;
pub mod control;
pub mod coverage;
pub mod git;
mod pr_report;
mod render;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use change::{PackFileChange, SkillPart};
use coverage::{within, PackView};
pub use git::{Base, Status};
pub use pr_report::Outcome;
pub use render::shell_line;

/// Where to plan from and against what.
#[derive(Debug, Clone)]
pub struct Options {
    /// A folder inside the repository.
    pub dir: PathBuf,
    /// The base revision; `None` for the merge base with the default branch.
    pub base: Option<String>,
}

/// What a changed path needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// Text the model reads changed: score and run against the base's wording.
    Measure,
    /// Front matter the model never sees: no model run.
    NoModelRun,
    /// A tool's program or MCP server changed: its recordings may be stale.
    Record,
    /// A pack's laws changed alone: judge the transcripts again.
    Rejudge,
    /// A pack's corpus, fixtures, variants or settings changed: run it.
    Run,
    /// A pack's judge cases changed: `check`, no model.
    Check,
    /// No pack reads the path.
    Nothing,
    /// The skill is removed: no wording left to measure.
    Removed,
    /// A file of a skill folder the change moved: planned at its new path.
    Moved,
    /// A path that leads outside the repository (a symlink): never read.
    Outside,
}

/// One changed path and what it needs.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub path: String,
    pub status: Status,
    /// For a file of a moved skill folder: where the base kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The skill whose folder holds the path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// For a skill's file: the parts that differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<SkillPart>,
    pub need: Need,
    /// Why, in words.
    pub why: String,
}

/// The kind of a planned check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    Check,
    Rejudge,
    Record,
    /// The changed `SKILL.md` as a variant over the base's skills tree: `score`, then `run`.
    MeasureWording,
    /// The pack run on the base's skills tree and on the work tree's, baselines compared
    /// (a reference, or a skill beside the one under test).
    MeasureTree,
    Run,
}

impl CheckKind {
    /// Whether the check loads the model.
    pub fn runs_model(self) -> bool {
        !matches!(self, CheckKind::Rejudge | CheckKind::Check)
    }
}

/// One planned check, with where it comes from.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub kind: CheckKind,
    /// The pack's folder, as `--pack` takes it.
    pub pack: String,
    /// `pack.toml` and the line that names the skill (or the file alone).
    pub provenance: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    pub why: String,
    /// The changed paths that call for it.
    pub because: Vec<String>,
    pub commands: Vec<String>,
    pub runs_model: bool,
    /// The commands `plan --run` carries out (`render::argv`); none for a check done by hand.
    #[serde(skip)]
    pub argv: Vec<Vec<String>>,
    /// The base's skills tree to compare with, when the skill moved there from another tree.
    #[serde(skip)]
    pub base_skills_dir: Option<String>,
}

/// A changed skill that no pack measures.
#[derive(Debug, Clone, Serialize)]
pub struct Uncovered {
    pub skill: String,
    pub path: String,
}

/// A pack that would gate the change but cannot fail for it.
#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    pub pack: String,
    pub provenance: String,
    pub skill: String,
    pub why: String,
}

/// The plan of one change.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The repository's root, where the commands run.
    #[serde(skip)]
    pub root: PathBuf,
    pub base: String,
    pub base_how: String,
    pub changes: Vec<Change>,
    pub checks: Vec<Check>,
    pub uncovered: Vec<Uncovered>,
    pub refused: Vec<Refusal>,
    /// The commands that lay the base's files out in `$BASE`, when a check compares with them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
}

impl Plan {
    /// Whether any planned check loads the model.
    pub fn runs_model(&self) -> bool {
        self.checks.iter().any(|c| c.runs_model)
    }

    /// The exit status: 1 when a gate was refused, or (with `strict`) a skill is not covered.
    pub fn exit_code(&self, strict: bool) -> u8 {
        u8::from(!self.refused.is_empty() || (strict && !self.uncovered.is_empty()))
    }

    pub fn render_text(&self) -> String {
        render::text(self)
    }

    /// The PR's one report, from what `plan --run` carried out.
    pub fn render_pr_report(&self, outcomes: &[Outcome]) -> String {
        pr_report::render(self, outcomes)
    }
}

/// Reads the diff and the packs, and plans every check the change needs.
pub fn plan(options: &Options) -> anyhow::Result<Plan> {
    let root = git::repository_root(&options.dir)?;
    let base = git::base(&root, options.base.as_deref())?;
    let changed = git::changed_paths(&root, &base.commit)?;
    let packs = coverage::load_packs(&root, &git::pack_files(&root)?)?;
    let moves = change::skill_moves(&root, &base.commit, &changed)?;
    let mut planner = Planner {
        root,
        base,
        packs,
        moves,
        changes: Vec::new(),
        checks: BTreeMap::new(),
        uncovered: Vec::new(),
        refused: Vec::new(),
    };
    for (status, path) in changed {
        planner.classify(status, &path)?;
    }
    Ok(planner.finish())
}

struct Planner {
    root: PathBuf,
    base: Base,
    packs: Vec<PackView>,
    /// Skill folders the change moved: (the base's folder, the work tree's).
    moves: Vec<(String, String)>,
    changes: Vec<Change>,
    /// By (pack, kind): several changed paths may call for one check.
    checks: BTreeMap<(String, CheckKind, Option<String>), Check>,
    uncovered: Vec<Uncovered>,
    refused: Vec<Refusal>,
}

impl Planner {
    fn change(&mut self, status: Status, path: &str, need: Need, why: String) {
        self.changes.push(Change {
            path: path.to_string(),
            status,
            from: None,
            skill: None,
            parts: Vec::new(),
            need,
            why,
        });
    }

    fn add_check(
        &mut self,
        view_index: usize,
        kind: CheckKind,
        skill: Option<&str>,
        why: String,
        path: &str,
    ) {
        let view = &self.packs[view_index];
        let key = (view.dir.clone(), kind, skill.map(str::to_string));
        let check = self.checks.entry(key).or_insert_with(|| Check {
            kind,
            pack: view.dir.clone(),
            provenance: match skill {
                Some(name) if name == view.pack.skill => view.skill_provenance(),
                Some(_) => view.tree_provenance(),
                None => view.file.clone(),
            },
            skill: skill.map(str::to_string),
            why: why.clone(),
            because: Vec::new(),
            commands: Vec::new(),
            runs_model: kind.runs_model(),
            argv: Vec::new(),
            base_skills_dir: None,
        });
        if !check.because.iter().any(|p| p == path) {
            check.because.push(path.to_string());
        }
        if !check.why.split("; ").any(|w| w == why) {
            check.why = format!("{}; {why}", check.why);
        }
    }

    fn classify(&mut self, status: Status, path: &str) -> anyhow::Result<()> {
        if let Err(target) = coverage::inside(&self.root, path) {
            let why = format!(
                "a symlink leading outside the repository (to {}): not read",
                target.display()
            );
            self.change(status, path, Need::Outside, why);
            return Ok(());
        }
        if self.classify_tool_program(status, path) {
            return Ok(());
        }
        if let Some(folder) = self.skill_folder(path) {
            return self.classify_skill_file(status, path, &folder);
        }
        if self.classify_pack_file(status, path)? {
            return Ok(());
        }
        self.change(status, path, Need::Nothing, "no pack reads it".into());
        Ok(())
    }

    /// A `command` tool's program or an `mcp` server: its recordings may be stale.
    fn classify_tool_program(&mut self, status: Status, path: &str) -> bool {
        let mut hits = Vec::new();
        for (i, view) in self.packs.iter().enumerate() {
            for (program, tool, fixtures) in coverage::tool_programs(&self.root, view) {
                if within(path, &program) {
                    hits.push((i, tool, fixtures));
                }
            }
        }
        if hits.is_empty() {
            return false;
        }
        let mut whys = Vec::new();
        for (i, tool, fixtures) in hits {
            let at = fixtures.unwrap_or_else(|| "its fixtures".into());
            let why = format!(
                "tool `{tool}` runs or reads it: its recordings in {at} may be stale; record them again"
            );
            whys.push(format!("{}: {why}", self.packs[i].dir));
            self.add_check(i, CheckKind::Record, None, why, path);
        }
        self.change(status, path, Need::Record, whys.join("; "));
        true
    }

    /// The nearest folder at or above `path` that holds a `SKILL.md`, now or at the base.
    fn skill_folder(&self, path: &str) -> Option<String> {
        let mut dir = Path::new(path).parent();
        while let Some(d) = dir {
            let rel = d.to_string_lossy().replace('\\', "/");
            let skill_md = if rel.is_empty() {
                "SKILL.md".to_string()
            } else {
                format!("{rel}/SKILL.md")
            };
            if self.root.join(&skill_md).is_file()
                || git::exists_at(&self.root, &self.base.commit, &skill_md)
            {
                return Some(rel);
            }
            dir = d.parent();
        }
        None
    }

    fn classify_skill_file(
        &mut self,
        status: Status,
        path: &str,
        folder: &str,
    ) -> anyhow::Result<()> {
        let skill_md = if folder.is_empty() {
            "SKILL.md".to_string()
        } else {
            format!("{folder}/SKILL.md")
        };
        let in_skill = path[folder.len()..].trim_start_matches('/');
        if let Some((_, to)) = self.moves.iter().find(|(from, _)| from == folder) {
            let to = join(to, in_skill);
            self.change(status, path, Need::Moved, format!("to {to}: planned there"));
            return Ok(());
        }
        let moved_from = self
            .moves
            .iter()
            .find(|(_, to)| to == folder)
            .map(|(from, _)| from.clone());
        let base_skill_md = moved_from
            .as_deref()
            .map_or_else(|| skill_md.clone(), |from| join(from, "SKILL.md"));
        if let Err(target) = coverage::inside(&self.root, &skill_md) {
            let why = format!(
                "its skill's {skill_md} is a symlink leading outside the repository (to {}): not read",
                target.display()
            );
            self.change(status, path, Need::Outside, why);
            return Ok(());
        }
        let head_md = coverage::read_inside(&self.root, &skill_md);
        let base_md = git::text_at(&self.root, &self.base.commit, &base_skill_md)?;
        let name = [head_md.as_deref(), base_md.as_deref()]
            .into_iter()
            .flatten()
            .find_map(|text| {
                crate::harness::skills::parse_skill_md(text, Path::new(&skill_md)).ok()
            })
            .map(|(meta, _)| meta.name)
            .unwrap_or_else(|| folder.rsplit('/').next().unwrap_or(folder).to_string());
        if head_md.is_none() && moved_from.is_none() {
            return self.classify_removed_skill(status, path, folder, &name);
        }
        let from = moved_from.as_deref().map(|from| join(from, in_skill));
        let parts = if in_skill == "SKILL.md" && from.is_some() && base_md == head_md {
            Vec::new()
        } else if in_skill == "SKILL.md" {
            let head = (status != Status::Deleted)
                .then_some(head_md.as_deref())
                .flatten();
            change::skill_md_parts(base_md.as_deref(), head, &self.root.join(path))?
        } else if in_skill.starts_with("references/") && in_skill.ends_with(".md") {
            let unchanged = match &from {
                Some(from) => {
                    git::text_at(&self.root, &self.base.commit, from)?
                        == coverage::read_inside(&self.root, path)
                }
                None => false,
            };
            if unchanged {
                Vec::new()
            } else {
                vec![SkillPart::Reference]
            }
        } else {
            Vec::new()
        };
        let model_facing = parts.iter().any(|p| p.model_facing());
        let labels: Vec<&str> = parts.iter().map(|p| p.label()).collect();
        let (need, why) = if model_facing {
            (
                Need::Measure,
                format!("{} changed, which the model reads", labels.join(", ")),
            )
        } else if parts.is_empty() && from.is_some() {
            (
                Need::Nothing,
                "moved, and the model reads nothing new in it".into(),
            )
        } else if parts.is_empty() {
            (
                Need::Nothing,
                "a file of the skill's folder the harness never reads".into(),
            )
        } else {
            (
                Need::NoModelRun,
                "only front matter the model never sees changed (version, tags, comments)".into(),
            )
        };
        self.changes.push(Change {
            path: path.to_string(),
            status,
            from,
            skill: Some(name.clone()),
            parts: parts.clone(),
            need,
            why,
        });
        if model_facing {
            self.plan_measure(
                &name,
                folder,
                path,
                &parts,
                (base_md.is_some(), head_md.is_some()),
            )?;
            if let Some(from) = &moved_from {
                let base_tree = parent_of(from);
                if base_tree != parent_of(folder) {
                    for check in self.checks.values_mut() {
                        if check.because.iter().any(|p| p == path) {
                            check.base_skills_dir = Some(base_tree.to_string());
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A file of a skill the change removes (its `SKILL.md` is gone and did not move): said,
    /// with nothing to measure; a pack that still names the skill no longer loads, and is
    /// refused.
    fn classify_removed_skill(
        &mut self,
        status: Status,
        path: &str,
        folder: &str,
        name: &str,
    ) -> anyhow::Result<()> {
        self.changes.push(Change {
            path: path.to_string(),
            status,
            from: None,
            skill: Some(name.to_string()),
            parts: Vec::new(),
            need: Need::Removed,
            why: "the change removes the skill: no wording left to measure".into(),
        });
        let tree = parent_of(folder);
        for i in 0..self.packs.len() {
            let view = &self.packs[i];
            if view.pack.skill == name && view.skills_dir == tree {
                let why = format!("the pack names skill `{name}`, which this change removes from {tree}/: it no longer loads; point it at another skill or remove the pack");
                self.refuse(i, name, why);
            }
        }
        Ok(())
    }

    /// The packs that measure skill `name` (in `folder`), or that offer it beside their own;
    /// a pack that names the skill but reads another copy, or cannot fail for it, is refused.
    fn plan_measure(
        &mut self,
        name: &str,
        folder: &str,
        path: &str,
        parts: &[SkillPart],
        (in_base, in_head): (bool, bool),
    ) -> anyhow::Result<()> {
        let tree = parent_of(folder).to_string();
        let wording =
            in_base && path.ends_with("SKILL.md") && !parts.contains(&SkillPart::Reference);
        let mut covered = false;
        let mut elsewhere = Vec::new();
        for i in 0..self.packs.len() {
            let view = &self.packs[i];
            let holds = view.skills_dir == tree;
            let measures = view.pack.skill == name;
            if measures && !holds {
                elsewhere.push(i);
                continue;
            }
            // Beside its own skill, a pack measures the changed one only where its corpus
            // routes prompts to skills by name (a `skill` field).
            if !holds || (!measures && !coverage::routes(view)?) {
                continue;
            }
            if let Some(why) = coverage::why_vacuous(view, name)? {
                if measures {
                    self.refuse(i, name, why);
                }
                continue;
            }
            covered = true;
            let (kind, why) = if measures && wording && in_head {
                (CheckKind::MeasureWording, format!("measures skill `{name}`: score, then run, the changed wording against the base's"))
            } else if measures && !in_base {
                (CheckKind::Run, format!("measures skill `{name}`, which the base has not: run it against the control"))
            } else if measures {
                (CheckKind::MeasureTree, format!("measures skill `{name}`: run on the base's skills tree and on this one, baselines compared"))
            } else {
                (CheckKind::MeasureTree, format!("offers skill `{name}` beside its skill `{}`, and some of its prompts reach it: run on the base's skills tree and on this one, baselines compared", view.pack.skill))
            };
            self.add_check(i, kind, Some(name), why, path);
        }
        // A pack of the same skill name that reads another copy is a gate that never loads
        // the change; it is refused when it is all there is.
        if !covered {
            for i in elsewhere {
                let why = format!(
                    "the pack never loads the changed skill: it reads skill `{name}` from {}/, not {folder}/",
                    self.packs[i].skills_dir
                );
                self.refuse(i, name, why);
            }
        }
        if !covered && !self.uncovered.iter().any(|u| u.skill == name) {
            self.uncovered.push(Uncovered {
                skill: name.to_string(),
                path: path.to_string(),
            });
        }
        Ok(())
    }

    fn refuse(&mut self, view_index: usize, skill: &str, why: String) {
        let view = &self.packs[view_index];
        let refusal = Refusal {
            pack: view.dir.clone(),
            provenance: view.skill_provenance(),
            skill: skill.to_string(),
            why,
        };
        let known = self
            .refused
            .iter()
            .any(|r| r.pack == refusal.pack && r.skill == refusal.skill);
        if !known {
            self.refused.push(refusal);
        }
    }

    /// A pack's own file: `pack.toml`, its corpus, fixtures, judge cases or variants.
    fn classify_pack_file(&mut self, status: Status, path: &str) -> anyhow::Result<bool> {
        let mut needs: Vec<(usize, CheckKind, String)> = Vec::new();
        for (i, view) in self.packs.iter().enumerate() {
            let corpus = coverage::relative(&self.root, &view.pack.corpus_path).unwrap_or_default();
            let fixtures: Vec<String> = view
                .pack
                .tools
                .iter()
                .filter_map(|t| {
                    t.fixtures
                        .as_ref()
                        .and_then(|f| coverage::relative(&self.root, f))
                })
                .collect();
            if path == view.file {
                let head = crate::base::input::read_input_to_string(self.root.join(path))
                    .unwrap_or_default();
                let base = git::text_at(&self.root, &self.base.commit, path)?;
                match change::pack_file_change(base.as_deref(), &head, Path::new(path))? {
                    PackFileChange::LawsOnly => needs.push((
                        i,
                        CheckKind::Rejudge,
                        "its laws changed alone: judge an earlier run's transcripts again".into(),
                    )),
                    PackFileChange::Settings => {
                        needs.push((
                            i,
                            CheckKind::Check,
                            "pack.toml changed: its laws against its judge cases".into(),
                        ));
                        needs.push((
                            i,
                            CheckKind::Run,
                            "pack.toml changed in what shapes a transcript: run it".into(),
                        ));
                    }
                    PackFileChange::Layout => needs.push((
                        i,
                        CheckKind::Check,
                        "pack.toml changed in comments or layout only".into(),
                    )),
                }
            } else if path == corpus {
                needs.push((
                    i,
                    CheckKind::Check,
                    "its corpus changed: every sample proved passable".into(),
                ));
                needs.push((i, CheckKind::Run, "its corpus changed: run it".into()));
            } else if fixtures.iter().any(|f| within(path, f)) {
                needs.push((i, CheckKind::Run, "its fixtures changed: run it".into()));
            } else if path == format!("{}/judge-cases.jsonl", view.dir) {
                needs.push((
                    i,
                    CheckKind::Check,
                    "its judge cases changed: check the laws against them".into(),
                ));
            } else if within(path, &format!("{}/variants", view.dir)) {
                needs.push((i, CheckKind::Run, "a variant changed: run it".into()));
            } else if within(path, &view.dir) {
                needs.push((
                    i,
                    CheckKind::Check,
                    "a file of the pack changed: check it".into(),
                ));
            }
        }
        if needs.is_empty() {
            return Ok(false);
        }
        let need = if needs.iter().any(|(_, k, _)| *k == CheckKind::Run) {
            Need::Run
        } else if needs.iter().any(|(_, k, _)| *k == CheckKind::Rejudge) {
            Need::Rejudge
        } else {
            Need::Check
        };
        let why: Vec<String> = needs
            .iter()
            .map(|(i, _, why)| format!("{}: {why}", self.packs[*i].dir))
            .collect();
        self.change(status, path, need, why.join("; "));
        for (i, kind, why) in needs {
            self.add_check(i, kind, None, why, path);
        }
        Ok(true)
    }

    fn finish(self) -> Plan {
        let mut checks: Vec<Check> = self.checks.into_values().collect();
        let mut needs_base = false;
        for check in &mut checks {
            let view = self.packs.iter().find(|v| v.dir == check.pack);
            let skills_dir = view.map(|v| v.skills_dir.clone()).unwrap_or_default();
            let base_dir = check.base_skills_dir.clone().unwrap_or(skills_dir.clone());
            check.commands = render::commands(check, &skills_dir, &base_dir);
            check.argv = render::argv(check, &base_dir);
            needs_base |= matches!(
                check.kind,
                CheckKind::MeasureWording | CheckKind::MeasureTree
            );
        }
        let setup = if needs_base {
            vec![format!(
                "BASE=$(mktemp -d) && git archive {} | tar -x -C \"$BASE\"",
                self.base.commit
            )]
        } else {
            Vec::new()
        };
        Plan {
            root: self.root,
            base: self.base.commit,
            base_how: self.base.how,
            changes: self.changes,
            checks,
            uncovered: self.uncovered,
            refused: self.refused,
            setup,
        }
    }
}

/// `folder/rest`, or `rest` in the root.
fn join(folder: &str, rest: &str) -> String {
    if folder.is_empty() {
        rest.to_string()
    } else {
        format!("{folder}/{rest}")
    }
}

/// The folder holding `path` (`""` for the root).
fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(parent, _)| parent)
}
