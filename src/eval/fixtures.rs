//! Recorded tool answers: a call is answered by tool name and normalized arguments. A call with
//! no recording is a gap, told to the model plainly and marked for the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How argument values are folded before they are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fold {
    /// Lower case.
    Case,
    /// Runs of white space become one space; ends trimmed.
    Whitespace,
    /// Punctuation dropped ("Paris, Texas." and "paris texas" meet).
    Punctuation,
}

pub fn fold_value(text: &str, folds: &[Fold]) -> String {
    let mut s = text.to_string();
    if folds.contains(&Fold::Case) {
        s = s.to_lowercase();
    }
    if folds.contains(&Fold::Punctuation) {
        s = s
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c.is_whitespace() {
                    c
                } else {
                    ' '
                }
            })
            .collect();
    }
    if folds.contains(&Fold::Whitespace) || folds.contains(&Fold::Punctuation) {
        s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    s
}

/// One recorded answer, stored as one JSON file. An unknown key is an error: a misspelt
/// `recorded_from_live` would otherwise read as false.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub tool: String,
    pub arguments: Map<String, Value>,
    /// False for hand-made answers, which a `--record` run replaces.
    #[serde(default)]
    pub recorded_from_live: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What answered when it was recorded (the command or MCP server) and when (UTC, RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_with: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
    /// A stub written for a gap (`skilleval fixtures`), not an answer yet: replay treats it as
    /// absent, so the call stays a gap until it is filled in (and `stub` removed) or recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stub: bool,
    pub status: u16,
    /// The service's answer: a JSON value, or a string for a non-JSON body.
    pub body: Value,
}

impl Fixture {
    /// How a service's answer is stored: a JSON object or array as JSON, so that fixture files
    /// stay readable and editable; anything else verbatim as a string, so that `body_text`
    /// gives back exactly what was sent (a bare JSON string or number would not round-trip).
    pub fn body_from_text(text: &str) -> Value {
        match serde_json::from_str::<Value>(text) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
            _ => Value::String(text.to_string()),
        }
    }

    /// The answer as the service sent it (a JSON body re-serialized: same keys and order,
    /// white space aside).
    pub fn body_text(&self) -> String {
        match &self.body {
            Value::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        }
    }
}

/// Which arguments key a tool's recordings, and how they are folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub tool: String,
    pub dir: PathBuf,
    pub key_arguments: Vec<String>,
    pub folds: Vec<Fold>,
}

impl Route {
    pub fn key(&self, arguments: &Map<String, Value>) -> String {
        self.key_arguments
            .iter()
            .map(|k| match arguments.get(k) {
                Some(Value::String(s)) => fold_value(s, &self.folds),
                Some(Value::Null) | None => String::new(),
                Some(other) => fold_value(&other.to_string(), &self.folds),
            })
            .collect::<Vec<_>>()
            .join("\u{1f}")
    }
}

/// File name for a new recording: a slug of its key values.
pub fn slug(text: &str) -> String {
    let folded = fold_value(text, &[Fold::Case, Fold::Punctuation]);
    let slug: String = folded
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        "empty".into()
    } else {
        slug
    }
}

#[derive(Debug, Default)]
pub struct FixtureStore {
    routes: BTreeMap<String, Route>,
    entries: Mutex<BTreeMap<(String, String), (PathBuf, Fixture)>>,
}

impl FixtureStore {
    /// Loads every `*.json` (any case) of each route's folder; a missing folder, a file that
    /// is not a fixture and a file whose tool has no route are errors naming the file.
    pub fn load(routes: Vec<Route>) -> anyhow::Result<Self> {
        Self::load_with(routes, false)
    }

    /// [`FixtureStore::load`] for a recording run: a missing folder is where the first
    /// recording will go.
    pub fn load_to_record(routes: Vec<Route>) -> anyhow::Result<Self> {
        Self::load_with(routes, true)
    }

    fn load_with(routes: Vec<Route>, missing_is_empty: bool) -> anyhow::Result<Self> {
        let store = FixtureStore {
            routes: routes.into_iter().map(|r| (r.tool.clone(), r)).collect(),
            entries: Mutex::new(BTreeMap::new()),
        };
        let dirs: std::collections::BTreeSet<PathBuf> =
            store.routes.values().map(|r| r.dir.clone()).collect();
        for dir in dirs {
            let read = match std::fs::read_dir(&dir) {
                Ok(read) => read,
                Err(e) if missing_is_empty && e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) if dir.exists() && !dir.is_dir() => bail!(
                    "{}: cannot read fixtures folder: {e} (it is a file; `fixtures` names a folder)",
                    dir.display()
                ),
                Err(e) => bail!(
                    "{}: cannot read fixtures folder: {e} (record into it with --record)",
                    dir.display()
                ),
            };
            let mut files: Vec<PathBuf> = read
                .flatten()
                .map(|e| e.path())
                .filter(|p| is_fixture_file(p))
                .collect();
            files.sort();
            for file in files {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| anyhow!("{}: cannot read: {e}", file.display()))?;
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                let fixture: Fixture = serde_json::from_str(text)
                    .map_err(|e| anyhow!("{}: not a fixture: {e}", file.display()))?;
                let Some(route) = store.routes.get(&fixture.tool) else {
                    bail!(
                        "{}: field `tool`: no route for tool {:?}",
                        file.display(),
                        fixture.tool
                    );
                };
                if route.dir != dir {
                    continue;
                }
                // A recording without one of its key arguments would answer a call nobody makes.
                if let Some(missing) = route
                    .key_arguments
                    .iter()
                    .find(|k| !fixture.arguments.contains_key(k.as_str()))
                {
                    bail!(
                        "{}: field `arguments.{missing}` is missing: tool {:?} is keyed by {}",
                        file.display(),
                        fixture.tool,
                        route.key_arguments.join(", ")
                    );
                }
                let key = route.key(&fixture.arguments);
                let mut entries = store.entries.lock().expect("fixture lock");
                if let Some((other, _)) = entries.get(&(fixture.tool.clone(), key.clone())) {
                    bail!(
                        "{}: field `arguments`: same key as {}",
                        file.display(),
                        other.display()
                    );
                }
                entries.insert((fixture.tool.clone(), key), (file, fixture));
            }
        }
        Ok(store)
    }

    pub fn route(&self, tool: &str) -> Option<&Route> {
        self.routes.get(tool)
    }

    pub fn len(&self) -> usize {
        self.entries.lock().expect("fixture lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every recording with the file it came from, sorted by tool and key.
    pub fn entries(&self) -> Vec<(PathBuf, Fixture)> {
        self.entries
            .lock()
            .expect("fixture lock")
            .values()
            .cloned()
            .collect()
    }

    /// The recording that answers this call; a stub answers nothing.
    pub fn lookup(&self, tool: &str, arguments: &Map<String, Value>) -> Option<(PathBuf, Fixture)> {
        self.lookup_any(tool, arguments)
            .filter(|(_, fixture)| !fixture.stub)
    }

    /// The file keyed by this call, a stub included.
    pub fn lookup_any(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Option<(PathBuf, Fixture)> {
        let route = self.routes.get(tool)?;
        let key = route.key(arguments);
        self.entries
            .lock()
            .expect("fixture lock")
            .get(&(tool.to_string(), key))
            .cloned()
    }

    /// Writes a recording to the route's folder and makes it answer from now on.
    pub fn record(&self, fixture: Fixture) -> anyhow::Result<PathBuf> {
        let route = self
            .routes
            .get(&fixture.tool)
            .ok_or_else(|| anyhow!("no fixture route for tool {:?}", fixture.tool))?;
        let key = route.key(&fixture.arguments);
        let mut entries = self.entries.lock().expect("fixture lock");
        let path = match entries.get(&(fixture.tool.clone(), key.clone())) {
            Some((existing, _)) => existing.clone(),
            None => unused_path(&route.dir, &slug(&key.replace('\u{1f}', " "))),
        };
        std::fs::create_dir_all(&route.dir)
            .map_err(|e| anyhow!("{}: cannot create: {e}", route.dir.display()))?;
        let text = serde_json::to_string_pretty(&fixture)? + "\n";
        // Written beside it and renamed over it: a symlink at `path` is replaced, never
        // written through, and a reader never sees half a file.
        let partial = route.dir.join(format!(".{}.partial", std::process::id()));
        std::fs::write(&partial, text)
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
        entries.insert((fixture.tool.clone(), key), (path.clone(), fixture));
        Ok(path)
    }
}

/// A file ending in `.json`, whatever its case (`.JSON` from another system counts too).
pub fn is_fixture_file(path: &Path) -> bool {
    path.is_file()
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

fn unused_path(dir: &Path, stem: &str) -> PathBuf {
    let mut path = dir.join(format!("{stem}.json"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.json"));
        n += 1;
    }
    path
}

/// What the model is told when a call has no recording.
pub fn gap_message(tool: &str, arguments: &Map<String, Value>) -> String {
    format!(
        "No recording for this call: {tool} {}. The answer is unknown.",
        Value::Object(arguments.clone())
    )
}
