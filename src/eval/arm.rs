//! The arms of a run: control, baseline and the variants, in plan order, the names journals give
//! them, the seed they share, and what the control arm removes from the skill.

use serde::{Deserialize, Serialize};

use crate::exec::seed::sample_seed;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Arm {
    /// The skill under test with its body removed: what the skill's front matter alone does.
    Control,
    Baseline,
    /// The run's variants, from 0 in the order they were given: `Variant(0)` is the first (or
    /// only) one, named `variant` in journals; `Variant(1)` is `variant2`, up to [`MAX_VARIANTS`].
    Variant(u8),
}

/// The most variants one run compares with its baseline.
pub const MAX_VARIANTS: usize = 9;

const VARIANT_NAMES: [&str; MAX_VARIANTS] = [
    "variant", "variant2", "variant3", "variant4", "variant5", "variant6", "variant7", "variant8",
    "variant9",
];

impl Arm {
    pub fn name(self) -> &'static str {
        match self {
            Arm::Control => "control",
            Arm::Baseline => "baseline",
            Arm::Variant(i) => VARIANT_NAMES[usize::from(i)],
        }
    }

    /// The arm of the run's `index`-th variant (from 0).
    pub fn variant(index: usize) -> Arm {
        assert!(index < MAX_VARIANTS, "at most {MAX_VARIANTS} variants");
        Arm::Variant(index as u8)
    }

    /// Which variant this arm is (from 0), if it is one.
    pub fn variant_index(self) -> Option<usize> {
        match self {
            Arm::Variant(i) => Some(usize::from(i)),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<Arm> {
        match name {
            "control" => Some(Arm::Control),
            "baseline" => Some(Arm::Baseline),
            other => VARIANT_NAMES
                .iter()
                .position(|n| *n == other)
                .map(|i| Arm::Variant(i as u8)),
        }
    }
}

/// The arms a run with `variants` variants (one for an A/A run) compares, in plan order:
/// control (unless left out), baseline, then each variant in the order given.
pub fn in_plan_order(control: bool, variants: usize) -> Vec<Arm> {
    let mut arms = Vec::new();
    if control {
        arms.push(Arm::Control);
    }
    arms.push(Arm::Baseline);
    arms.extend((0..variants.max(1)).map(Arm::variant));
    arms
}

/// The seed of one unit: from the run seed, the sample and the repeat, and shared by every arm
/// (control, baseline, each variant), so that a difference between arms comes from the skill's
/// text, not the dice. An A/A run (`aa`, no variant) salts its second arm's seed, so that it
/// measures how far two runs of the same wording drift apart.
pub fn paired_seed(run_seed: u64, sample_id: &str, repeat: u32, arm: Arm, aa: bool) -> u32 {
    let salt = if aa && arm == Arm::Variant(0) {
        "aa"
    } else {
        ""
    };
    sample_seed(run_seed, sample_id, repeat, salt)
}

impl Serialize for Arm {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Arm {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Arm::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown arm {name:?}; known: control, baseline, variant, variant2 … variant{MAX_VARIANTS}"
            ))
        })
    }
}

/// What the control arm takes away from the skill under test, to show whether the model reads
/// that part at all: the body (what a loaded skill says), or the description (what the model
/// reads to decide whether to load it, for a pack that offers skills by description).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlPart {
    #[default]
    Body,
    Description,
}

impl ControlPart {
    pub fn is_body(&self) -> bool {
        *self == ControlPart::Body
    }

    pub fn name(self) -> &'static str {
        match self {
            ControlPart::Body => "body",
            ControlPart::Description => "description",
        }
    }
}
