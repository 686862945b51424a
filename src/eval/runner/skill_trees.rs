//! The skills trees a run compares: the baseline, each variant laid over it, and the control
//! (the skill under test with its body, or its description, removed).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

use crate::eval::arm::Arm;
use crate::eval::arm::ControlPart;
use crate::eval::pack::Pack;
use crate::harness::skills::SkillTree;

/// The skills trees a run compares, one per arm.
pub struct SkillTrees {
    /// The skill under test with an empty body: its name and description are still offered
    /// (and it is still preloaded when the pack preloads it), so only the body is missing.
    pub control: SkillTree,
    pub baseline: SkillTree,
    /// Each variant laid over the baseline, in the order given (arm `Variant(i)`); an A/A run
    /// has one, the baseline itself.
    pub variants: Vec<SkillTree>,
    /// No variant: the baseline against itself.
    pub aa: bool,
}

impl SkillTrees {
    pub fn tree(&self, arm: Arm) -> &SkillTree {
        match arm {
            Arm::Control => &self.control,
            Arm::Baseline => &self.baseline,
            Arm::Variant(i) => &self.variants[usize::from(i)],
        }
    }

    /// The first (or only) variant's tree.
    pub fn first_variant(&self) -> &SkillTree {
        &self.variants[0]
    }

    /// How many variants the run compares (one for an A/A run).
    pub fn variant_count(&self) -> usize {
        self.variants.len()
    }
}

/// Where the control arm's skill says it came from.
const CONTROL_SOURCE: &str = "<control: the skill with an empty body>";

/// `tree` with the part `pack.control` names removed from the skill under test: its body
/// emptied (its front matter kept), or its description (its body kept).
fn control_tree(pack: &Pack, tree: &SkillTree) -> anyhow::Result<SkillTree> {
    match pack.control {
        ControlPart::Body => tree.with_overlay(&pack.skill, "", Path::new(CONTROL_SOURCE)),
        ControlPart::Description => tree
            .with_description(&pack.skill, "")
            .ok_or_else(|| anyhow!("skill {:?} is not in the skills tree", pack.skill)),
    }
}

/// The skills trees of a run that compares `variants` (none: the baseline against itself),
/// each laid over the same baseline; each file may be named once. The skill under test must be
/// in the baseline, unless the first variant adds it (a variant with front matter naming it):
/// that run measures what adding the skill does.
pub fn skill_trees(
    pack: &Pack,
    skills_dir: Option<&Path>,
    variants: &[PathBuf],
) -> anyhow::Result<SkillTrees> {
    let Some((first, further)) = variants.split_first() else {
        let baseline = pack.skills(skills_dir)?;
        return Ok(SkillTrees {
            control: control_tree(pack, &baseline)?,
            variants: vec![baseline.clone()],
            baseline,
            aa: true,
        });
    };
    let mut trees = with_first_variant(pack, skills_dir, first)?;
    if variants.len() > crate::eval::arm::MAX_VARIANTS {
        bail!(
            "--variant: {} variants given; one run compares at most {}",
            variants.len(),
            crate::eval::arm::MAX_VARIANTS
        );
    }
    for (i, path) in further.iter().enumerate() {
        // Every file before this one: the first variant and the further ones so far.
        if variants[..=i].iter().any(|p| same_file(p, path)) {
            bail!("--variant {}: named twice", path.display());
        }
        let text = crate::harness::skills::read_variant(path)?;
        trees
            .variants
            .push(overlay_variant(pack, &trees.baseline, &text, path)?);
    }
    Ok(trees)
}

/// The baseline tree and the first variant, at `path`, laid over it.
fn with_first_variant(
    pack: &Pack,
    skills_dir: Option<&Path>,
    path: &Path,
) -> anyhow::Result<SkillTrees> {
    let text = crate::harness::skills::read_variant(path)?;
    let baseline = match pack.skills(skills_dir) {
        Ok(tree) => tree,
        Err(absent) => {
            let dir = skills_dir.unwrap_or(&pack.skills_dir);
            let tree = SkillTree::load(dir)?;
            if tree.get(&pack.skill).is_some() {
                return Err(absent);
            }
            if !crate::harness::skills::has_front_matter(&text) {
                bail!(
                    "{}: front matter: the variant has none, and skill {:?} is not in the baseline tree {}, so there is no skill to lay it over; start the file with front matter (`name: {}`, `description`) to add the skill",
                    path.display(),
                    pack.skill,
                    dir.display(),
                    pack.skill
                );
            }
            tree
        }
    };
    let variant = overlay_variant(pack, &baseline, &text, path)?;
    // The skill's front matter comes from the baseline, or from the variant when it adds the
    // skill.
    let control = match baseline.get(&pack.skill) {
        Some(_) => control_tree(pack, &baseline)?,
        None => control_tree(pack, &variant)?,
    };
    Ok(SkillTrees {
        control,
        baseline,
        variants: vec![variant],
        aa: false,
    })
}

/// The baseline with one variant's text laid over the skill under test.
fn overlay_variant(
    pack: &Pack,
    baseline: &SkillTree,
    text: &str,
    path: &Path,
) -> anyhow::Result<SkillTree> {
    let variant = baseline.with_overlay(&pack.skill, text, path)?;
    let Some(skill) = variant.get(&pack.skill) else {
        bail!(
            "{}: field `name`: the variant renames skill {:?}; keep the name to compare",
            path.display(),
            pack.skill
        );
    };
    // Front matter without `allowed-tools` grants nothing, and a tool no skill grants is
    // offered from the start: the variant would change when its tools are offered, unseen.
    let granted = baseline
        .get(&pack.skill)
        .map(|s| s.meta.granted_tools())
        .unwrap_or_default();
    if !granted.is_empty() && skill.meta.granted_tools().is_empty() {
        bail!(
            "{}: field `allowed-tools` is missing: the baseline grants {}, and without the field they would be offered before the skill is loaded; copy the baseline's `allowed-tools` line, or give the body alone (no front matter) to keep the baseline's",
            path.display(),
            granted.join(", ")
        );
    }
    Ok(variant)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
