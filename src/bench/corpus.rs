//! BFCL question and answer files: JSON lines, questions `{"id", "question", "function"}`,
//! answers `{"id", "ground_truth"}`, joined by id.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::template::{Message, Role};

/// The single-turn categories vendored under `corpora/bfcl/`.
pub const CATEGORIES: [&str; 13] = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
];

/// File names carry this version prefix, as BFCL names them.
pub const VERSION_PREFIX: &str = "BFCL_v4";

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("unknown BFCL category {0:?}")]
    UnknownCategory(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: String,
    pub category: String,
    /// Turns of the conversation; single-turn categories have one.
    pub turns: Vec<Vec<Message>>,
    /// Function documents in BFCL's schema dialect (`"type": "dict"`, `"float"`, …).
    pub functions: Vec<Value>,
    /// One item per expected call, `{name: {param: [accepted values]}}`; `None` when the
    /// category has no answers (irrelevance, relevance).
    pub ground_truth: Option<Vec<Value>>,
}

impl Entry {
    pub fn is_irrelevance(&self) -> bool {
        self.category.contains("irrelevance")
    }
}

/// `corpora/bfcl` of this crate's source tree.
pub fn default_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpora")
        .join("bfcl")
}

pub fn question_path(root: &Path, category: &str) -> PathBuf {
    root.join(format!("{VERSION_PREFIX}_{category}.json"))
}

pub fn answer_path(root: &Path, category: &str) -> PathBuf {
    root.join("possible_answer")
        .join(format!("{VERSION_PREFIX}_{category}.json"))
}

/// The category an entry id belongs to: `live_simple_12-3-0` → `live_simple`.
pub fn category_of_id(id: &str) -> &str {
    let base = id.split(':').next().unwrap_or(id);
    match base.rfind('_') {
        Some(at) if base[at + 1..].starts_with(|c: char| c.is_ascii_digit()) => &base[..at],
        _ => base,
    }
}

/// Loads a vendored category with its answers (none for the relevance categories).
pub fn load_category(root: &Path, category: &str) -> Result<Vec<Entry>, CorpusError> {
    if !CATEGORIES.contains(&category) {
        return Err(CorpusError::UnknownCategory(category.to_string()));
    }
    let answers = answer_path(root, category);
    let answers = answers.exists().then_some(answers);
    load_files(&question_path(root, category), answers.as_deref(), category)
}

/// Loads any question file in BFCL's shape, joined with an optional answer file by id.
/// Every question must have an answer when an answer file is given.
pub fn load_files(
    questions: &Path,
    answers: Option<&Path>,
    category: &str,
) -> Result<Vec<Entry>, CorpusError> {
    let mut truth_by_id = HashMap::new();
    if let Some(path) = answers {
        for (line, object) in read_json_lines(path)? {
            let id = string_field(path, line, &object, "id")?;
            let truth = array_field(path, line, &object, "ground_truth")?;
            truth_by_id.insert(id, truth);
        }
    }
    let mut entries = Vec::new();
    for (line, object) in read_json_lines(questions)? {
        let id = string_field(questions, line, &object, "id")?;
        let turns = parse_turns(questions, line, &object)?;
        let functions = array_field(questions, line, &object, "function")?;
        let ground_truth = match answers {
            None => None,
            Some(path) => Some(
                truth_by_id
                    .remove(&id)
                    .ok_or_else(|| CorpusError::Invalid {
                        path: path.to_path_buf(),
                        line: 0,
                        message: format!(
                            "no ground_truth for id {id:?} of {}",
                            questions.display()
                        ),
                    })?,
            ),
        };
        entries.push(Entry {
            id,
            category: category.to_string(),
            turns,
            functions,
            ground_truth,
        });
    }
    Ok(entries)
}

fn read_json_lines(path: &Path) -> Result<Vec<(usize, Value)>, CorpusError> {
    let text = fs::read_to_string(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| CorpusError::Invalid {
            path: path.to_path_buf(),
            line: index + 1,
            message: format!("not JSON: {e}"),
        })?;
        rows.push((index + 1, value));
    }
    Ok(rows)
}

fn invalid(path: &Path, line: usize, message: String) -> CorpusError {
    CorpusError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    }
}

fn string_field(
    path: &Path,
    line: usize,
    object: &Value,
    field: &str,
) -> Result<String, CorpusError> {
    object
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            invalid(
                path,
                line,
                format!("field {field:?} missing or not a string"),
            )
        })
}

fn array_field(
    path: &Path,
    line: usize,
    object: &Value,
    field: &str,
) -> Result<Vec<Value>, CorpusError> {
    object
        .get(field)
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| {
            invalid(
                path,
                line,
                format!("field {field:?} missing or not an array"),
            )
        })
}

fn parse_turns(path: &Path, line: usize, object: &Value) -> Result<Vec<Vec<Message>>, CorpusError> {
    let turns = object
        .get("question")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            invalid(
                path,
                line,
                "field \"question\" missing or not an array".into(),
            )
        })?;
    turns
        .iter()
        .enumerate()
        .map(|(t, turn)| {
            let messages = turn.as_array().ok_or_else(|| {
                invalid(
                    path,
                    line,
                    format!("field \"question[{t}]\" is not an array"),
                )
            })?;
            messages
                .iter()
                .enumerate()
                .map(|(m, message)| {
                    let field = format!("question[{t}][{m}]");
                    let role = match message.get("role").and_then(Value::as_str) {
                        Some("system") => Role::System,
                        Some("user") => Role::User,
                        Some("assistant") => Role::Assistant,
                        Some("tool") => Role::Tool,
                        other => {
                            return Err(invalid(
                                path,
                                line,
                                format!("field \"{field}.role\" is {other:?}"),
                            ))
                        }
                    };
                    let content =
                        message
                            .get("content")
                            .and_then(Value::as_str)
                            .ok_or_else(|| {
                                invalid(
                                    path,
                                    line,
                                    format!("field \"{field}.content\" missing or not a string"),
                                )
                            })?;
                    Ok(Message::new(role, content))
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_comes_from_id() {
        assert_eq!(category_of_id("simple_python_12"), "simple_python");
        assert_eq!(category_of_id("live_simple_12-3-0"), "live_simple");
        assert_eq!(
            category_of_id("live_parallel_multiple_0-0-0"),
            "live_parallel_multiple"
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let dir = std::env::temp_dir().join(format!("bfcl_corpus_{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("q.json");
        fs::write(
            &path,
            "{\"id\": \"a_0\", \"question\": [[{\"role\": \"user\", \"content\": \"hi\"}]], \"function\": []}\n\
             {\"id\": \"a_1\", \"question\": [[{\"role\": \"robot\", \"content\": \"hi\"}]], \"function\": []}\n",
        )
        .unwrap();
        let err = load_files(&path, None, "a").unwrap_err().to_string();
        assert!(err.contains("q.json:2:"), "{err}");
        assert!(err.contains("question[0][0].role"), "{err}");
        fs::remove_dir_all(&dir).ok();
    }
}
