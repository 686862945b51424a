//! The arms of a run: control, baseline and the variants, and the names journals give them.

use serde::{Deserialize, Serialize};

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
