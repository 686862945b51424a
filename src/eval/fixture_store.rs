//! Recorded tool answers: a call is answered by tool name and normalized arguments. A call with
//! no recording is a gap, told to the model plainly and marked for the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::harness::tools::PriorWrite;

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
    /// The answer's bytes as the tool printed them, when `body` is JSON the tool spaced or
    /// ordered otherwise than its compact form: replay shows the model these, so that laws
    /// written against the tool's real output hold. It must read back as `body`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<String>,
    /// The writes that ran before the call in its conversation, in order: the state the answer
    /// was recorded in. Empty for a call no write came before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<PriorWrite>,
}

impl Fixture {
    /// How a service's answer is stored: a JSON object or array as JSON, so that fixture files
    /// stay readable and editable; anything else verbatim as a string, so that `body_text`
    /// gives back exactly what was sent (a bare JSON string or number would not round-trip).
    pub fn body_from_text(text: &str) -> Value {
        Self::answer_from_text(text).0
    }

    /// The stored `body` and `printed` of an answer: `printed` holds the exact text when the
    /// JSON body's compact form is not it.
    pub fn answer_from_text(text: &str) -> (Value, Option<String>) {
        let body = match serde_json::from_str::<Value>(text) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
            _ => return (Value::String(text.to_string()), None),
        };
        let compact = serde_json::to_string(&body).unwrap_or_default();
        let printed = (compact != text).then(|| text.to_string());
        (body, printed)
    }

    /// The answer as the tool sent it: the printed bytes when they were kept, else the body
    /// (a JSON body in its compact form).
    pub fn body_text(&self) -> String {
        if let Some(printed) = &self.printed {
            return printed.clone();
        }
        match &self.body {
            Value::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        }
    }

    /// Why `printed` cannot stand for `body`: it does not read back as the same JSON (one was
    /// edited without the other).
    fn printed_disagrees(&self) -> Option<String> {
        let printed = self.printed.as_ref()?;
        match serde_json::from_str::<Value>(printed) {
            Ok(value) if value == self.body => None,
            Ok(_) => Some("does not read back as `body` (edit both, or delete `printed`)".into()),
            Err(e) => Some(format!("is not JSON ({e}); edit it, or delete `printed`")),
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
    /// Every argument the tool takes, when its schema names them: a recording that lacks a key
    /// argument and has one of another name is refused (a misspelt key argument would
    /// otherwise read as one left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<String>,
}

impl Route {
    /// The key of a call's recording: each key argument's folded value after a `=`, and nothing
    /// for one the call left out (or passed as `null`). Absent is a value of its own, so that
    /// an optional argument can key recordings: a call without it is answered only by a
    /// recording made without it, and one with it never by that one.
    pub fn key(&self, arguments: &Map<String, Value>) -> String {
        self.key_arguments
            .iter()
            .map(|k| match arguments.get(k) {
                Some(Value::String(s)) => format!("={}", fold_value(s, &self.folds)),
                Some(Value::Null) | None => String::new(),
                Some(other) => format!("={}", fold_value(&value_key(other), &self.folds)),
            })
            .collect::<Vec<_>>()
            .join("\u{1f}")
    }
}

/// A value's text in a key, numbers by value: `120`, `120.0` and `1.2e2` are one number, so
/// one recording (and one file name), as laws compare numbers by value too.
fn value_key(value: &Value) -> String {
    match value {
        Value::Number(n) => match n.as_f64() {
            // Whole numbers within f64's exact range print as integers; others as Rust's
            // shortest text for the value, which reads back as the same f64.
            Some(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                format!("{}", f as i64)
            }
            Some(f) if f.is_finite() => format!("{f}"),
            _ => n.to_string(),
        },
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(value_key).collect::<Vec<_>>().join(",")
        ),
        Value::Object(members) => format!(
            "{{{}}}",
            members
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), value_key(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

/// A short digest of a sequence of writes, each as its tool and its recording key (its key
/// arguments, folded): the state those writes leave, whatever else their arguments said.
pub fn after_digest(routes: &BTreeMap<String, Route>, after: &[PriorWrite]) -> String {
    let canonical: Vec<Value> = after
        .iter()
        .map(|w| {
            let key = match routes.get(&w.tool) {
                Some(route) => route.key(&w.arguments),
                None => Value::Object(w.arguments.clone()).to_string(),
            };
            serde_json::json!([w.tool, key])
        })
        .collect();
    crate::eval::digest::sha256_hex(Value::Array(canonical).to_string().as_bytes())[..12]
        .to_string()
}

/// File name stem for a new recording: its key values folded, made a file name by the
/// program's one rule (`base::names::file_stem`: safe characters, at most 64 bytes).
pub fn slug(text: &str) -> String {
    let folded = fold_value(text, &[Fold::Case, Fold::Punctuation]);
    crate::base::names::file_stem(&folded)
}

/// What became of a recording.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// Written to this file.
    Written(PathBuf),
    /// Not written: the file holds an answer for the key that the new one may not replace (a
    /// good answer, and the live tool failed; or any answer, and the live tool gave none of its
    /// own: it died of a signal or timed out), so the file's answer is kept.
    Kept { path: PathBuf, kept: Box<Fixture> },
    /// Not written: a call earlier in this run recorded the same key (its arguments fold to the
    /// same), and its recording stands for the run; `same` when this answer is that one's.
    EarlierInRun { path: PathBuf, same: bool },
}

/// A status that is the tool's answer rather than its failure.
pub fn is_good_status(status: u16) -> bool {
    (200..300).contains(&status)
}

#[derive(Debug, Default)]
pub struct FixtureStore {
    routes: BTreeMap<String, Route>,
    entries: Mutex<BTreeMap<(String, String), (PathBuf, Fixture)>>,
    /// The keys this process recorded: each is recorded once a run.
    recorded: Mutex<std::collections::BTreeSet<(String, String)>>,
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
            recorded: Mutex::new(Default::default()),
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
                let text = crate::base::input::read_input_to_string(&file)
                    .map_err(|e| anyhow!("{}: cannot read: {e}", file.display()))?;
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                let fixture: Fixture = serde_json::from_str(text)
                    .map_err(|e| anyhow!("{}: not a fixture: {e}", file.display()))?;
                if let Some(why) = fixture.printed_disagrees() {
                    bail!("{}: field `printed`: {why}", file.display());
                }
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
                // A key argument the recording lacks is a key value of its own: the recording
                // answers calls that leave that argument out. Beside an argument the tool does
                // not take, it is a misspelling, which would answer calls nobody makes.
                let lacks_a_key = route
                    .key_arguments
                    .iter()
                    .any(|k| !fixture.arguments.contains_key(k));
                let unknown = fixture
                    .arguments
                    .keys()
                    .find(|k| !route.arguments.is_empty() && !route.arguments.contains(k));
                if let (true, Some(unknown)) = (lacks_a_key, unknown) {
                    bail!(
                        "{}: field `arguments.{unknown}`: not an argument of tool {:?} (it takes {})",
                        file.display(),
                        fixture.tool,
                        route.arguments.join(", ")
                    );
                }
                let key = store.key_after(route, &fixture.arguments, &fixture.after);
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

    /// The key of a recording made after `after`: the call's key, then the digest of the
    /// writes before it, so that one call made in two states has two recordings.
    pub fn key_after(
        &self,
        route: &Route,
        arguments: &Map<String, Value>,
        after: &[PriorWrite],
    ) -> String {
        let key = route.key(arguments);
        if after.is_empty() {
            return key;
        }
        format!("{key}\u{1e}after={}", after_digest(&self.routes, after))
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
        self.lookup_after(tool, arguments, &[])
    }

    /// The recording that answers this call after these writes; a stub answers nothing.
    pub fn lookup_after(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        after: &[PriorWrite],
    ) -> Option<(PathBuf, Fixture)> {
        self.lookup_any(tool, arguments, after)
            .filter(|(_, fixture)| !fixture.stub)
    }

    /// The file keyed by this call after these writes, a stub included.
    pub fn lookup_any(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        after: &[PriorWrite],
    ) -> Option<(PathBuf, Fixture)> {
        let route = self.routes.get(tool)?;
        let key = self.key_after(route, arguments, after);
        self.entries
            .lock()
            .expect("fixture lock")
            .get(&(tool.to_string(), key))
            .cloned()
    }

    /// Writes a recording to the route's folder and makes it answer from now on. The folder is
    /// locked while the file for the key is found and written, so two processes recording at
    /// once write one file per key; the file is written atomically (`base::write`); a good
    /// answer on disk is never replaced by a failure, and a key is written once a run.
    pub fn record(&self, fixture: Fixture) -> anyhow::Result<Recorded> {
        self.record_answer(fixture, true)
    }

    /// [`FixtureStore::record`] for what is no answer of the tool's own (a death by a signal, a
    /// time-out): written only where the key has no answer on file, never over one.
    pub fn record_no_answer(&self, fixture: Fixture) -> anyhow::Result<Recorded> {
        self.record_answer(fixture, false)
    }

    fn record_answer(&self, fixture: Fixture, tool_answered: bool) -> anyhow::Result<Recorded> {
        let route = self
            .routes
            .get(&fixture.tool)
            .ok_or_else(|| anyhow!("no fixture route for tool {:?}", fixture.tool))?;
        let key = self.key_after(route, &fixture.arguments, &fixture.after);
        let id = (fixture.tool.clone(), key.clone());
        let mut entries = self.entries.lock().expect("fixture lock");
        if self.recorded.lock().expect("record lock").contains(&id) {
            if let Some((path, kept)) = entries.get(&id) {
                return Ok(Recorded::EarlierInRun {
                    path: path.clone(),
                    same: kept.status == fixture.status && kept.body == fixture.body,
                });
            }
        }
        let _lock = crate::base::write::FolderLock::acquire(&route.dir)
            .map_err(|e| anyhow!("{}: cannot lock for recording: {e}", route.dir.display()))?;
        // The file that holds this key now, on disk: another process may have written it.
        let on_disk = |path: &Path| -> Option<Fixture> {
            let text = crate::base::input::read_input_to_string(path).ok()?;
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            serde_json::from_str::<Fixture>(text).ok().filter(|f| {
                f.tool == fixture.tool && self.key_after(route, &f.arguments, &f.after) == key
            })
        };
        let mut found: Option<(PathBuf, Option<Fixture>)> = entries
            .get(&id)
            .map(|(path, _)| (path.clone(), on_disk(path)));
        if found.is_none() {
            let key_text = route.key(&fixture.arguments).replace(['\u{1f}', '='], " ");
            // A tool that takes no argument is named by itself.
            let stem = match key_text.trim().is_empty() {
                true => slug(&fixture.tool),
                false => slug(&key_text),
            };
            let stem = match fixture.after.is_empty() {
                true => stem,
                false => format!(
                    "{stem}-after-{}",
                    &after_digest(&self.routes, &fixture.after)[..8]
                ),
            };
            for n in 1.. {
                let path = if n == 1 {
                    route.dir.join(format!("{stem}.json"))
                } else {
                    route.dir.join(format!("{stem}-{n}.json"))
                };
                if std::fs::symlink_metadata(&path).is_err() {
                    found = Some((path, None));
                    break;
                }
                if let Some(existing) = on_disk(&path) {
                    found = Some((path, Some(existing)));
                    break;
                }
            }
        }
        let (path, existing) = found.expect("a free name is found");
        if let Some(existing) = existing {
            let worse = is_good_status(existing.status) && !is_good_status(fixture.status);
            if !existing.stub && (worse || !tool_answered) {
                entries.insert(id.clone(), (path.clone(), existing.clone()));
                self.recorded.lock().expect("record lock").insert(id);
                return Ok(Recorded::Kept {
                    path,
                    kept: Box::new(existing),
                });
            }
        }
        let text = serde_json::to_string_pretty(&fixture)? + "\n";
        crate::base::write::write_atomic(&path, text.as_bytes())
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
        entries.insert(id.clone(), (path.clone(), fixture));
        self.recorded.lock().expect("record lock").insert(id);
        Ok(Recorded::Written(path))
    }
}

/// A file ending in `.json`, whatever its case (`.JSON` from another system counts too).
/// Anything but a folder counts, so that a FIFO or a device named `*.json` is refused by
/// `base::input` with a line, not skipped in silence.
pub fn is_fixture_file(path: &Path) -> bool {
    !path.is_dir()
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// What the model is told when a call has no recording.
pub fn gap_message(tool: &str, arguments: &Map<String, Value>) -> String {
    format!(
        "No recording for this call: {tool} {}. The answer is unknown.",
        Value::Object(arguments.clone())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn route(dir: &Path) -> Route {
        Route {
            tool: "t".into(),
            dir: dir.to_path_buf(),
            key_arguments: vec!["q".into()],
            folds: vec![Fold::Case],
            arguments: Vec::new(),
        }
    }

    fn answer(q: &str, status: u16, body: &str) -> Fixture {
        Fixture {
            tool: "t".into(),
            arguments: json!({ "q": q }).as_object().cloned().unwrap(),
            recorded_from_live: true,
            status,
            body: Value::String(body.into()),
            ..Default::default()
        }
    }

    fn json_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }

    /// Truth: JSON's own rule that `120` and `120.0` are one number (a change: both used to
    /// make two keys, and two files `120.json` and `120-0.json`).
    #[test]
    fn numbers_equal_as_values_are_one_key_and_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        let with = |q: Value| Fixture {
            arguments: json!({ "q": q }).as_object().cloned().unwrap(),
            ..answer("", 200, "filed")
        };
        assert!(matches!(
            store.record(with(json!(120.0))).unwrap(),
            Recorded::Written(_)
        ));
        assert!(matches!(
            store.record(with(json!(120))).unwrap(),
            Recorded::EarlierInRun { same: true, .. }
        ));
        assert_eq!(json_files(dir.path()), ["120.json"]);
        let replay = FixtureStore::load(vec![route(dir.path())]).unwrap();
        for q in [json!(120), json!(120.0), json!(1.2e2)] {
            let args = json!({ "q": q }).as_object().cloned().unwrap();
            assert!(
                replay.lookup("t", &args).is_some(),
                "{q} finds the recording"
            );
        }
        let other = json!({ "q": 120.5 }).as_object().cloned().unwrap();
        assert!(
            replay.lookup("t", &other).is_none(),
            "120.5 is another number"
        );
    }

    #[test]
    fn two_stores_recording_one_key_write_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        let b = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        a.record(answer("Paris", 200, "one")).unwrap();
        b.record(answer("PARIS", 200, "two")).unwrap();
        assert_eq!(json_files(dir.path()), ["paris.json"]);
        assert!(FixtureStore::load(vec![route(dir.path())]).is_ok());
    }

    #[test]
    fn a_failure_never_replaces_a_good_answer() {
        let dir = tempfile::tempdir().unwrap();
        let a = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        a.record(answer("Paris", 200, "good")).unwrap();
        let b = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        match b.record(answer("Paris", 500, "crashed")).unwrap() {
            Recorded::Kept { kept, .. } => assert_eq!(kept.body, json!("good")),
            other => panic!("{other:?}"),
        }
        let text = std::fs::read_to_string(dir.path().join("paris.json")).unwrap();
        assert!(text.contains("good"), "{text}");
    }

    /// A change: what is no answer of the tool's own keeps any answer on file, and is written
    /// only where there is none.
    #[test]
    fn no_answer_never_replaces_any_answer() {
        let dir = tempfile::tempdir().unwrap();
        let a = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        a.record(answer("Bury", 500, "No station called 'Bury'"))
            .unwrap();
        let b = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        match b.record_no_answer(answer("Bury", 500, "")).unwrap() {
            Recorded::Kept { kept, .. } => assert_eq!(kept.body, json!("No station called 'Bury'")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            b.record_no_answer(answer("Wigan", 504, "")).unwrap(),
            Recorded::Written(_)
        ));
    }

    #[test]
    fn a_key_is_recorded_once_a_run_and_names_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let a = FixtureStore::load_to_record(vec![route(dir.path())]).unwrap();
        a.record(answer("Paris", 200, "first")).unwrap();
        assert!(matches!(
            a.record(answer("paris", 200, "second")).unwrap(),
            Recorded::EarlierInRun { same: false, .. }
        ));
        assert!(matches!(
            a.record(answer("PARIS", 200, "first")).unwrap(),
            Recorded::EarlierInRun { same: true, .. }
        ));
        // "a/b" and "a b" give one stem, and two keys: two files.
        a.record(answer("a/b", 200, "x")).unwrap();
        a.record(answer("a b", 200, "y")).unwrap();
        assert_eq!(
            json_files(dir.path()),
            ["a-b-2.json", "a-b.json", "paris.json"]
        );
        let long = "z".repeat(400);
        match a.record(answer(&long, 200, "z")).unwrap() {
            Recorded::Written(path) => {
                assert!(path.file_name().unwrap().len() < 80, "{}", path.display())
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_optional_key_argument_left_out_is_a_key_value_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let keyed = |dir: &Path| Route {
            key_arguments: vec!["q".into(), "carrier".into()],
            ..route(dir)
        };
        let store = FixtureStore::load_to_record(vec![keyed(dir.path())]).unwrap();
        store.record(answer("1Z9", 200, "no carrier")).unwrap();
        let mut with_carrier = answer("1Z9", 200, "by UPS");
        with_carrier
            .arguments
            .insert("carrier".into(), json!("UPS"));
        store.record(with_carrier).unwrap();
        let mut empty_carrier = answer("1Z9", 200, "carrier given empty");
        empty_carrier.arguments.insert("carrier".into(), json!(""));
        store.record(empty_carrier).unwrap();

        // Both load back, and each call gets the answer recorded for its own arguments.
        let store = FixtureStore::load(vec![keyed(dir.path())]).unwrap();
        let body = |arguments: Value| {
            store
                .lookup("t", arguments.as_object().unwrap())
                .map(|(_, f)| f.body_text())
        };
        assert_eq!(body(json!({"q": "1z9"})).as_deref(), Some("no carrier"));
        assert_eq!(
            body(json!({"q": "1z9", "carrier": null})).as_deref(),
            Some("no carrier")
        );
        assert_eq!(
            body(json!({"q": "1z9", "carrier": "ups"})).as_deref(),
            Some("by UPS")
        );
        assert_eq!(
            body(json!({"q": "1z9", "carrier": ""})).as_deref(),
            Some("carrier given empty")
        );
        assert_eq!(body(json!({"q": "1z9", "carrier": "DHL"})), None);
    }

    #[test]
    fn a_json_answer_is_replayed_as_the_tool_printed_it() {
        let printed = "{\"status\": \"in transit\",\n \"eta\": null}\n";
        let (body, kept) = Fixture::answer_from_text(printed);
        assert_eq!(body, json!({"status": "in transit", "eta": null}));
        let fixture = Fixture {
            body,
            printed: kept,
            ..answer("x", 200, "")
        };
        let stored: Fixture =
            serde_json::from_str(&serde_json::to_string(&fixture).unwrap()).unwrap();
        assert_eq!(stored.body_text(), printed);
        // Compact JSON needs no copy of its bytes.
        assert_eq!(Fixture::answer_from_text("{\"a\":1}").1, None);

        // A `printed` edited apart from its `body` is refused when the store loads.
        let dir = tempfile::tempdir().unwrap();
        let mut edited = stored;
        edited.printed = Some("{\"status\": \"delivered\"}".into());
        std::fs::write(
            dir.path().join("x.json"),
            serde_json::to_string(&edited).unwrap(),
        )
        .unwrap();
        let error = FixtureStore::load(vec![route(dir.path())])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("x.json: field `printed`: does not read back"),
            "{error}"
        );
    }
}
