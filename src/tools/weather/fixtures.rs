//! Recorded answers: one JSON file per location, replayed through the same `render_result` as a
//! live call so a replayed run shows the model exactly what a live one would have.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::client::Fetched;
use super::place::fold;
use super::{render_result, TOOL_NAME};
use crate::harness::tools::ToolOutput;

/// One recorded call, as stored in `fixtures/weather/<slug>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fixture {
    pub tool: String,
    pub arguments: Map<String, Value>,
    /// False for hand-made bodies; a `--record` run against the live service sets it.
    pub recorded_from_live: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    pub status: u16,
    /// The JSON object when the answer parsed as JSON, else the body text as a string.
    pub body: Value,
}

impl Fixture {
    /// A fixture for what the live service just answered.
    pub fn recorded(location: &str, fetched: &Fetched) -> Fixture {
        let body = match serde_json::from_str::<Value>(&fetched.body) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
            _ => Value::String(fetched.body.clone()),
        };
        let mut arguments = Map::new();
        arguments.insert(
            "location".into(),
            Value::String(location.trim().to_string()),
        );
        Fixture {
            tool: TOOL_NAME.to_string(),
            arguments,
            recorded_from_live: true,
            note: String::new(),
            status: fetched.status,
            body,
        }
    }

    pub fn location(&self) -> Option<&str> {
        self.arguments.get("location").and_then(Value::as_str)
    }

    /// The body as the service sent it: a string body verbatim, a JSON body re-serialized
    /// (same keys and order, whitespace aside).
    pub fn body_text(&self) -> String {
        match &self.body {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    }

    pub fn render(&self, location: &str) -> ToolOutput {
        render_result(location, self.status, &self.body_text())
    }

    pub fn file_name(&self) -> Option<String> {
        self.location()
            .map(|location| format!("{}.json", fixture_slug(location)))
    }

    /// Writes `<dir>/<slug>.json`, pretty-printed, and returns the path.
    pub fn write_to(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let Some(file_name) = self.file_name() else {
            bail!("fixture has no location argument");
        };
        let path = dir.join(file_name);
        let text = serde_json::to_string_pretty(self)? + "\n";
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }
}

/// "Paris, Texas" → "paris-texas"; "São Paulo" → "sao-paulo". Case, accents and punctuation
/// do not change what the service answers, so they do not change the file either.
pub fn fixture_slug(location: &str) -> String {
    fold(location).replace(' ', "-")
}

/// Every fixture in a folder, by slug.
#[derive(Debug, Clone, Default)]
pub struct FixtureSet {
    by_slug: BTreeMap<String, Fixture>,
}

impl FixtureSet {
    pub fn load_dir(dir: &Path) -> anyhow::Result<FixtureSet> {
        let mut set = FixtureSet::default();
        let entries =
            std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        let mut paths: Vec<PathBuf> = entries
            .map(|entry| entry.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        paths.sort();
        for path in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
        {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let fixture: Fixture = serde_json::from_str(&text)
                .with_context(|| format!("parsing {}", path.display()))?;
            let Some(location) = fixture.location() else {
                bail!("{} has no arguments.location", path.display());
            };
            let slug = fixture_slug(location);
            let expected_name = format!("{slug}.json");
            if path
                .file_name()
                .is_some_and(|name| name != expected_name.as_str())
            {
                bail!("{} should be named {expected_name}", path.display());
            }
            set.by_slug.insert(slug, fixture);
        }
        Ok(set)
    }

    pub fn get(&self, location: &str) -> Option<&Fixture> {
        self.by_slug.get(&fixture_slug(location))
    }

    pub fn len(&self) -> usize {
        self.by_slug.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_slug.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Fixture)> {
        self.by_slug.iter().map(|(slug, f)| (slug.as_str(), f))
    }

    /// The recorded answer for `location`. A location nobody recorded looks like an outage to
    /// the model, and `meta.fixture_gap` tells the runner to count it rather than judge it.
    pub fn replay(&self, location: &str) -> ToolOutput {
        let location = location.trim();
        let slug = fixture_slug(location);
        match self.by_slug.get(&slug) {
            Some(fixture) => {
                let mut output = fixture.render(location);
                if let Value::Object(meta) = &mut output.meta {
                    meta.insert("fixture".into(), Value::String(slug));
                }
                output
            }
            None => ToolOutput::error(format!(
                "The weather service could not be reached: no answer was recorded for {location}."
            ))
            .with_meta(json!({"outcome": "unavailable", "fixture_gap": true, "fixture": slug})),
        }
    }
}
