//! `skilleval lint`: every way a skills folder departs from the Agent Skills format, each with
//! its file and line. The loader is lenient, so that a skill written for another client still
//! loads; lint is where the format is held to the letter.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_yaml::Value;

use super::{checked_body, skill_folders, split_front_matter};

/// The format's limits, in characters.
pub const NAME_MAX: usize = 64;
pub const DESCRIPTION_MAX: usize = 1024;
pub const COMPATIBILITY_MAX: usize = 500;
/// The format advises a body under this many lines; longer ones cost context on every load.
pub const BODY_LINES_ADVISED: usize = 500;

/// Fields the Agent Skills format defines.
const FORMAT_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];
/// skilleval's own fields, which the format leaves to clients (`skilleval stamp` bumps
/// `version`).
const SKILLEVAL_FIELDS: [&str; 2] = ["version", "tags"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub file: PathBuf,
    /// 1-based line in the file.
    pub line: usize,
    pub severity: Severity,
    /// The front-matter field, or `body`, or empty for the file as a whole.
    pub field: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{}:{}: {severity}: ", self.file.display(), self.line)?;
        if !self.field.is_empty() {
            write!(f, "field `{}`: ", self.field)?;
        }
        write!(f, "{}", self.message)
    }
}

/// What is said of a worked example written as prose.
pub const PROSE_EXAMPLE: &str = "a worked example written as prose (`User:` then a reply): a small model reads it as instructions and copies no call from it; write it as an ```example block, which the harness shows as earlier turns in the model's own chat and call format (docs/harness.md, \"Worked examples in a skill's body\")";

/// Warnings for the worked examples written as prose in a `SKILL.md`'s text, by file line:
/// what `init` and `check` say of a pack's skill before any model time.
pub fn prose_example_findings(text: &str, file: &Path) -> Vec<Finding> {
    let Ok((_, body)) = split_front_matter(text) else {
        return Vec::new();
    };
    let body_line = text[..text.len() - body.len()].lines().count() + 1;
    crate::harness::examples::prose_example_lines(body)
        .into_iter()
        .map(|index| Finding {
            file: file.to_path_buf(),
            line: body_line + index,
            severity: Severity::Warning,
            field: "body".into(),
            message: PROSE_EXAMPLE.into(),
        })
        .collect()
}

/// What lint found under one folder.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub skills: usize,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }
}

/// Lints a skills folder (`<root>/<skill>/SKILL.md`), or one skill's folder when `root` holds a
/// `SKILL.md` itself. Fails only when the folder cannot be read.
pub fn lint_path(root: &Path) -> anyhow::Result<Report> {
    let mut report = Report::default();
    // One file: a SKILL.md (held to its folder's name) or a variant, which lives under any name.
    if root.is_file() {
        let text =
            crate::base::input::read_input_limited(root, super::SKILL_FILE_MAX_BYTES, "a skill")
                .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", root.display()))?;
        let Ok(text) = String::from_utf8(text) else {
            report.skills = 1;
            report.findings.push(whole_file(root, "is not UTF-8 text"));
            return Ok(report);
        };
        let is_skill_md = root.file_name().and_then(|n| n.to_str()) == Some("SKILL.md");
        let folder = root
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .filter(|_| is_skill_md);
        report.skills = 1;
        report.findings.extend(lint_text(&text, root, folder));
        return Ok(report);
    }
    if crate::base::input::is_present(&root.join("SKILL.md")) {
        lint_folder(root, &mut report, &mut BTreeMap::new());
        return Ok(report);
    }
    let entries = std::fs::read_dir(root)
        .map_err(|e| anyhow::anyhow!("{}: cannot read skills folder: {e}", root.display()))?;
    let dirs = skill_folders(entries);
    if dirs.is_empty() {
        report.findings.push(Finding {
            file: root.to_path_buf(),
            line: 1,
            severity: Severity::Error,
            field: String::new(),
            message: "no skill folders here (each needs a SKILL.md)".into(),
        });
    }
    let mut seen = BTreeMap::new();
    for dir in dirs {
        lint_folder(&dir, &mut report, &mut seen);
    }
    Ok(report)
}

fn lint_folder(dir: &Path, report: &mut Report, seen: &mut BTreeMap<String, PathBuf>) {
    let file = dir.join("SKILL.md");
    report.skills += 1;
    let text =
        match crate::base::input::read_input_limited(&file, super::SKILL_FILE_MAX_BYTES, "a skill")
            .map(String::from_utf8)
        {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                report.findings.push(whole_file(&file, "is not UTF-8 text"));
                return;
            }
            Err(e) => {
                report
                    .findings
                    .push(whole_file(&file, &format!("cannot read: {e}")));
                return;
            }
        };
    let folder = dir.file_name().and_then(|n| n.to_str());
    let findings = lint_text(&text, &file, folder);
    if let Some(name) = declared_name(&text) {
        if let Some(first) = seen.get(&name) {
            report.findings.push(Finding {
                file: file.clone(),
                line: key_line(&text, "name").unwrap_or(1),
                severity: Severity::Error,
                field: "name".into(),
                message: format!(
                    "skill {name:?} is also defined in {}",
                    first.join("SKILL.md").display()
                ),
            });
        } else {
            seen.insert(name, dir.to_path_buf());
        }
    }
    report.findings.extend(findings);
}

fn whole_file(file: &Path, message: &str) -> Finding {
    Finding {
        file: file.to_path_buf(),
        line: 1,
        severity: Severity::Error,
        field: String::new(),
        message: message.into(),
    }
}

fn declared_name(text: &str) -> Option<String> {
    let (yaml, _) = split_front_matter(text).ok()?;
    let value: Value = serde_yaml::from_str(yaml).ok()?;
    value.get("name")?.as_str().map(str::to_owned)
}

/// Every finding for one `SKILL.md`'s text; `folder` is the name of the folder it sits in.
pub fn lint_text(text: &str, file: &Path, folder: Option<&str>) -> Vec<Finding> {
    let mut findings = Findings {
        file,
        text,
        list: Vec::new(),
    };
    let (map, body) = match front_matter(text) {
        Ok(parts) => parts,
        Err((line, message)) => {
            findings.push(line, Severity::Error, "", message);
            return findings.list;
        }
    };
    check_name(&map, folder, &mut findings);
    check_description(&map, &mut findings);
    check_license(&map, &mut findings);
    check_compatibility(&map, &mut findings);
    check_metadata(&map, &mut findings);
    check_allowed_tools(&map, &mut findings);
    check_field_names(&map, &mut findings);
    check_body(body, &mut findings);
    let mut list = findings.list;
    list.sort_by_key(|f| (f.line, f.severity));
    list
}

/// The findings of one file, in the order they are found.
struct Findings<'a> {
    file: &'a Path,
    text: &'a str,
    list: Vec<Finding>,
}

impl Findings<'_> {
    fn push(&mut self, line: usize, severity: Severity, field: &str, message: String) {
        self.list.push(Finding {
            file: self.file.to_path_buf(),
            line,
            severity,
            field: field.to_string(),
            message,
        });
    }

    /// A finding about the front-matter field `key`, on its line.
    fn on_field(&mut self, severity: Severity, key: &str, message: String) {
        let line = key_line(self.text, key).unwrap_or(1);
        self.push(line, severity, key, message);
    }

    fn field_error(&mut self, key: &str, message: String) {
        self.on_field(Severity::Error, key, message);
    }
}

/// The front matter as a mapping of fields, and the body; else the line and what is wrong.
fn front_matter(text: &str) -> Result<(serde_yaml::Mapping, &str), (usize, String)> {
    let (yaml, body) = split_front_matter(text).map_err(|message| (1, message.to_string()))?;
    let value: Value = serde_yaml::from_str(yaml).map_err(|e| {
        // A problem found at the end of the YAML (an unclosed bracket) is on its last line,
        // not on the closing `---`.
        let last = yaml.lines().count() + 1;
        let line = e.location().map_or(1, |at| (at.line() + 1).min(last));
        let message = e.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.as_str(), |cut| &message[..cut]);
        (line, format!("front matter is not YAML: {message}"))
    })?;
    // A tagged mapping counts as its mapping.
    match value.as_mapping() {
        Some(map) => Ok((map.clone(), body)),
        // An empty front matter: every required field is missing.
        None if value.is_null() => Ok((serde_yaml::Mapping::new(), body)),
        None => Err((2, "front matter must be a mapping of fields".into())),
    }
}

/// `name`: required, by the format's rule, and the name of the skill's folder.
fn check_name(map: &serde_yaml::Mapping, folder: Option<&str>, findings: &mut Findings) {
    match map.get("name") {
        None => findings.field_error("name", "missing; the format requires it".into()),
        Some(Value::String(name)) => {
            for problem in name_problems(name) {
                findings.field_error("name", problem);
            }
            if let Some(folder) = folder.filter(|folder| name != folder) {
                findings.field_error(
                    "name",
                    format!("{name:?} does not match the skill's folder name {folder:?}"),
                );
            }
        }
        Some(_) => findings.field_error("name", "must be a string".into()),
    }
}

/// `description`: required, not empty, within the format's length.
fn check_description(map: &serde_yaml::Mapping, findings: &mut Findings) {
    match map.get("description") {
        None => findings.field_error("description", "missing; the format requires it".into()),
        Some(Value::String(description)) => {
            let length = description.chars().count();
            if description.trim().is_empty() {
                findings.field_error("description", "is empty".into());
            } else if length > DESCRIPTION_MAX {
                findings.field_error(
                    "description",
                    format!("is {length} characters; the format allows {DESCRIPTION_MAX}"),
                );
            }
        }
        Some(_) => findings.field_error("description", "must be a string".into()),
    }
}

/// `license`, when given: a string.
fn check_license(map: &serde_yaml::Mapping, findings: &mut Findings) {
    if map
        .get("license")
        .is_some_and(|license| !license.is_string())
    {
        findings.field_error("license", "must be a string".into());
    }
}

/// `compatibility`, when given: not empty, within the format's length.
fn check_compatibility(map: &serde_yaml::Mapping, findings: &mut Findings) {
    match map.get("compatibility") {
        None => {}
        Some(Value::String(text)) => {
            let length = text.chars().count();
            if text.trim().is_empty() {
                findings.field_error("compatibility", "is empty; leave it out instead".into());
            } else if length > COMPATIBILITY_MAX {
                findings.field_error(
                    "compatibility",
                    format!("is {length} characters; the format allows {COMPATIBILITY_MAX}"),
                );
            }
        }
        Some(_) => findings.field_error("compatibility", "must be a string".into()),
    }
}

/// `metadata`, when given: strings to strings.
fn check_metadata(map: &serde_yaml::Mapping, findings: &mut Findings) {
    match map.get("metadata") {
        None => {}
        Some(Value::Mapping(entries)) => {
            for (key, value) in entries {
                if !key.is_string() || !value.is_string() {
                    let shown = serde_yaml::to_string(key).unwrap_or_default();
                    findings.field_error(
                        "metadata",
                        format!("entry {} must map a string to a string", shown.trim_end()),
                    );
                }
            }
        }
        Some(_) => findings.field_error(
            "metadata",
            "must be a mapping of string keys to string values".into(),
        ),
    }
}

/// `allowed-tools`, when given: one space-separated string, each entry's name (before a
/// `(pattern)`) held to the rule a pack's tools are.
fn check_allowed_tools(map: &serde_yaml::Mapping, findings: &mut Findings) {
    match map.get("allowed-tools") {
        None => {}
        Some(Value::String(text)) => {
            // A pattern in parentheses may hold spaces (`Bash(git add:*)`): only the names
            // outside them are checked.
            let mut depth = 0usize;
            for entry in text.split_whitespace() {
                if depth == 0 {
                    let name = entry.split('(').next().unwrap_or(entry);
                    if let Err(e) = crate::harness::tools::check_tool_name(name) {
                        findings.field_error("allowed-tools", e);
                    }
                }
                for c in entry.chars() {
                    match c {
                        '(' => depth += 1,
                        ')' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
            }
        }
        Some(Value::Sequence(_)) => findings.field_error(
            "allowed-tools",
            "is a list; the format wants one space-separated string (`allowed-tools: a b`)".into(),
        ),
        Some(_) => findings.field_error(
            "allowed-tools",
            "must be a space-separated string of tool names".into(),
        ),
    }
}

/// Every field is one of the format's or skilleval's own; another is kept, with a warning.
fn check_field_names(map: &serde_yaml::Mapping, findings: &mut Findings) {
    for key in map.keys() {
        let Some(key) = key.as_str() else {
            findings.push(
                2,
                Severity::Error,
                "",
                "a field name is not a string".into(),
            );
            continue;
        };
        if FORMAT_FIELDS.contains(&key) || SKILLEVAL_FIELDS.contains(&key) {
            continue;
        }
        let message = if key == "tools" {
            "skilleval's older key for the tools a skill grants; the format's is `allowed-tools`"
                .to_string()
        } else {
            "not a field of the Agent Skills format; kept as written, but other clients may \
             refuse it (`metadata` holds extra fields)"
                .to_string()
        };
        findings.on_field(Severity::Warning, key, message);
    }
}

/// The body: one the loader accepts, not empty, worked examples as example blocks rather than
/// prose, and within the lines the format advises.
fn check_body(body: &str, findings: &mut Findings) {
    let text = findings.text;
    let file = findings.file;
    let body_line = text[..text.len() - body.len()].lines().count() + 1;
    if let Err(e) = checked_body(body, file) {
        let message = format!("{e:#}");
        let message = message
            .strip_prefix(&format!("{}: ", file.display()))
            .unwrap_or(&message)
            .to_string();
        findings.push(body_line, Severity::Error, "body", message);
    }
    if body.trim().is_empty() {
        findings.push(
            body_line,
            Severity::Warning,
            "body",
            "is empty: a loaded skill would tell the model nothing".into(),
        );
    }
    for index in crate::harness::examples::prose_example_lines(body) {
        findings.push(
            body_line + index,
            Severity::Warning,
            "body",
            PROSE_EXAMPLE.into(),
        );
    }
    let body_lines = body.lines().count();
    if body_lines > BODY_LINES_ADVISED {
        findings.push(
            body_line,
            Severity::Warning,
            "body",
            format!("is {body_lines} lines; the format advises under {BODY_LINES_ADVISED}"),
        );
    }
}

/// What is wrong with a skill name by the format's rule: 1–64 lowercase letters, digits and
/// single hyphens, neither first nor last.
pub fn name_problems(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let length = name.chars().count();
    if length == 0 {
        problems.push("is empty".to_string());
        return problems;
    }
    if length > NAME_MAX {
        problems.push(format!(
            "is {length} characters; the format allows {NAME_MAX}"
        ));
    }
    let bad: Vec<char> = name
        .chars()
        .filter(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        .collect();
    if !bad.is_empty() {
        let shown: String = bad.iter().collect();
        problems.push(format!(
            "{name:?} holds {shown:?}; only lowercase letters, digits and hyphens are allowed"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push(format!("{name:?} starts or ends with a hyphen"));
    }
    if name.contains("--") {
        problems.push(format!("{name:?} has two hyphens in a row"));
    }
    problems
}

/// The file line of a top-level front-matter key (`key:` at the start of a line).
fn key_line(text: &str, key: &str) -> Option<usize> {
    let (yaml, _) = split_front_matter(text).ok()?;
    yaml.lines().enumerate().find_map(|(i, line)| {
        let rest = line.strip_prefix(key)?;
        let rest = rest.trim_start_matches([' ', '\t']);
        rest.starts_with(':').then_some(i + 2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint(text: &str) -> Vec<Finding> {
        lint_text(text, Path::new("x/SKILL.md"), Some("x"))
    }

    #[test]
    fn a_conforming_skill_has_nothing_to_report() {
        let text = "---\nname: x\ndescription: Does x.\nlicense: MIT\nallowed-tools: a b(c:*)\nmetadata:\n  author: me\n---\nBody.\n";
        assert_eq!(lint(text), Vec::new());
    }

    #[test]
    fn each_field_is_found_on_its_own_line() {
        let text = "---\nname: X_y\ndescription: ''\ncompatibility: 3\nmetadata: [a]\nextra: 1\n---\nBody.\n";
        let found: Vec<(usize, String, Severity)> = lint(text)
            .into_iter()
            .map(|f| (f.line, f.field, f.severity))
            .collect();
        let lines: Vec<(usize, String)> = found.iter().map(|(l, f, _)| (*l, f.clone())).collect();
        assert!(lines.contains(&(2, "name".into())), "{found:?}");
        assert!(lines.contains(&(3, "description".into())), "{found:?}");
        assert!(lines.contains(&(4, "compatibility".into())), "{found:?}");
        assert!(lines.contains(&(5, "metadata".into())), "{found:?}");
        assert!(
            found.contains(&(6, "extra".into(), Severity::Warning)),
            "{found:?}"
        );
    }
}
