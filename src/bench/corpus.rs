//! BFCL question and answer files: JSON lines, questions `{"id", "question", "function"}`,
//! answers `{"id", "ground_truth"}`, joined by id. Multi-turn questions name API classes
//! instead of functions (`involved_classes`); their documents come from `multi_turn_func_doc/`.
//! Memory questions share one file across the memory backends; each names a scenario whose
//! prerequisite conversations (`memory_prereq_conversation/`) fill the memory first.

use std::collections::{BTreeMap, HashMap};
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

/// The multi-turn categories vendored under `corpora/bfcl/`: several user turns over BFCL's
/// stateful APIs, run and checked through BFCL's own code (`multi_turn_helper`).
pub const MULTI_TURN_CATEGORIES: [&str; 4] = [
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
];

/// The memory categories that run offline: BFCL's key-value and recursive-summary memory
/// backends, one question file for both. (`memory_vector` needs an embedding model.)
pub const MEMORY_CATEGORIES: [&str; 2] = ["memory_kv", "memory_rec_sum"];

/// Every vendored category: the single-turn ones, the multi-turn ones, the memory ones.
pub fn vendored_categories() -> Vec<&'static str> {
    CATEGORIES
        .iter()
        .chain(MULTI_TURN_CATEGORIES.iter())
        .chain(MEMORY_CATEGORIES.iter())
        .copied()
        .collect()
}

pub fn is_multi_turn(category: &str) -> bool {
    category.starts_with("multi_turn")
}

/// A memory category or a memory prerequisite (`memory_kv_prereq`), as BFCL's `is_memory`.
pub fn is_memory(category: &str) -> bool {
    category.starts_with("memory_")
}

/// The memory backend of a memory category: `memory_kv_prereq` → `kv`.
pub fn memory_backend(category: &str) -> Option<&'static str> {
    let category = category.strip_suffix("_prereq").unwrap_or(category);
    MEMORY_CATEGORIES
        .iter()
        .find(|c| **c == category)
        .map(|c| &c["memory_".len()..])
}

/// The question file the memory categories share, and the folder of their prerequisites.
pub const MEMORY_QUESTIONS: &str = "memory";
pub const MEMORY_PREREQ_DIR: &str = "memory_prereq_conversation";

/// BFCL's `MULTI_TURN_FUNC_DOC_FILE_MAPPING`: the document file of each API class.
pub const API_DOC_FILES: [(&str, &str); 10] = [
    ("GorillaFileSystem", "gorilla_file_system.json"),
    ("MathAPI", "math_api.json"),
    ("MessageAPI", "message_api.json"),
    ("TwitterAPI", "posting_api.json"),
    ("TicketAPI", "ticket_api.json"),
    ("TradingBot", "trading_bot.json"),
    ("TravelAPI", "travel_booking.json"),
    ("VehicleControlAPI", "vehicle_control.json"),
    ("MemoryAPI_kv", "memory_kv.json"),
    ("MemoryAPI_rec_sum", "memory_rec_sum.json"),
];

/// Folder of the API classes' function documents, under the corpus root.
pub const API_DOC_DIR: &str = "multi_turn_func_doc";

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
    /// category has no answers (irrelevance, relevance). Multi-turn: one list of call
    /// strings per turn.
    pub ground_truth: Option<Vec<Value>>,
    /// What a multi-turn entry adds; `None` for single-turn ones.
    pub multi_turn: Option<MultiTurn>,
}

/// What a conversation over BFCL's API classes (multi-turn and memory) adds to an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiTurn {
    /// The question line as BFCL wrote it (`id`, `initial_config`, `involved_classes`, …):
    /// what BFCL's executor and checker read.
    pub question: Value,
    /// Turn index → documents held out of `functions` and offered at that turn
    /// (`multi_turn_miss_func`), in BFCL's order.
    pub held_out: BTreeMap<usize, Vec<Value>>,
    /// A memory entry's scenario, whose prerequisite conversations fill its memory.
    pub scenario: Option<String>,
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
    if is_multi_turn(category) && MULTI_TURN_CATEGORIES.contains(&category) {
        return load_multi_turn(root, category);
    }
    if MEMORY_CATEGORIES.contains(&category) {
        return load_memory(root, category);
    }
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
        // Multi-turn and memory questions name classes; their loaders fill in the documents.
        let functions = if is_multi_turn(category) || is_memory(category) {
            Vec::new()
        } else {
            array_field(questions, line, &object, "function")?
        };
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
            multi_turn: None,
        });
    }
    Ok(entries)
}

/// A multi-turn category: questions, answers, and each entry's function documents gathered
/// from its classes as BFCL's `populate_test_cases_with_predefined_functions` gathers them.
fn load_multi_turn(root: &Path, category: &str) -> Result<Vec<Entry>, CorpusError> {
    let questions = question_path(root, category);
    let answers = answer_path(root, category);
    let mut entries = load_files(&questions, Some(&answers), category)?;
    let rows = read_json_lines(&questions)?;
    let mut documents: HashMap<&str, Vec<Value>> = HashMap::new();
    for (entry, (line, question)) in entries.iter_mut().zip(rows) {
        let classes = question
            .get("involved_classes")
            .and_then(Value::as_array)
            .filter(|classes| classes.iter().all(Value::is_string))
            .ok_or_else(|| {
                invalid(
                    &questions,
                    line,
                    "field \"involved_classes\" missing or not an array of names".into(),
                )
            })?;
        let mut functions = Vec::new();
        // Every name is checked before any document is read, so the error names the field.
        let mut known = Vec::new();
        for (i, class) in classes.iter().filter_map(Value::as_str).enumerate() {
            let Some(found) = API_DOC_FILES.iter().find(|(name, _)| *name == class) else {
                return Err(invalid(
                    &questions,
                    line,
                    format!("field \"involved_classes[{i}]\" is {class:?}, not an API class BFCL's multi-turn categories have"),
                ));
            };
            known.push(found);
        }
        for (name, file) in known {
            if !documents.contains_key(name) {
                let path = root.join(API_DOC_DIR).join(file);
                let docs = read_json_lines(&path)?
                    .into_iter()
                    .map(|(_, d)| d)
                    .collect();
                documents.insert(name, docs);
            }
            functions.extend(documents[name].iter().cloned());
        }
        let mut held_out = BTreeMap::new();
        if let Some(missed) = question.get("missed_function") {
            let missed = missed.as_object().ok_or_else(|| {
                invalid(
                    &questions,
                    line,
                    "field \"missed_function\" is not an object".into(),
                )
            })?;
            for (turn, names) in missed {
                let field = format!("missed_function.{turn}");
                let index: usize = turn.parse().map_err(|_| {
                    invalid(
                        &questions,
                        line,
                        format!("field \"{field}\": {turn:?} is not a turn index"),
                    )
                })?;
                let names = names.as_array().ok_or_else(|| {
                    invalid(
                        &questions,
                        line,
                        format!("field \"{field}\" is not an array"),
                    )
                })?;
                let mut docs = Vec::new();
                for name in names.iter().filter_map(Value::as_str) {
                    // The first document of that name leaves the list, as BFCL's `pop(i)`.
                    if let Some(at) = functions
                        .iter()
                        .position(|f| f.get("name").and_then(Value::as_str) == Some(name))
                    {
                        docs.push(functions.remove(at));
                    }
                }
                held_out.insert(index, docs);
            }
        }
        if entry.ground_truth.as_ref().map(Vec::len) != Some(entry.turns.len()) {
            return Err(invalid(
                &answers,
                0,
                format!(
                    "{}: the ground truth has not one list of calls per turn",
                    entry.id
                ),
            ));
        }
        entry.functions = functions;
        entry.multi_turn = Some(MultiTurn {
            question,
            held_out,
            scenario: None,
        });
    }
    Ok(entries)
}

/// A memory category's questions, as BFCL's `process_memory_test_case` makes them from the
/// shared file: ids `memory_N-…` become `<category>_N-…`, the class is the category's
/// backend, and the functions are that backend's documents.
fn load_memory(root: &Path, category: &str) -> Result<Vec<Entry>, CorpusError> {
    let questions = question_path(root, MEMORY_QUESTIONS);
    let answers = answer_path(root, MEMORY_QUESTIONS);
    let mut entries = load_files(&questions, Some(&answers), category)?;
    let rows = read_json_lines(&questions)?;
    let documents = memory_documents(root, category)?;
    for (entry, (line, question)) in entries.iter_mut().zip(rows) {
        let scenario = string_field(&questions, line, &question, "scenario")?;
        if !prerequisite_path(root, &scenario).is_file() {
            return Err(invalid(
                &questions,
                line,
                format!(
                    "field \"scenario\" is {scenario:?}, which has no prerequisite conversations \
                     ({})",
                    prerequisite_path(root, &scenario).display()
                ),
            ));
        }
        memory_entry(entry, question, category, &documents, Some(scenario));
    }
    Ok(entries)
}

/// The prerequisite conversations of a memory category's scenario, in the order BFCL runs
/// them; their category is `<category>_prereq`, and they have no answers.
pub fn memory_prerequisites(
    root: &Path,
    category: &str,
    scenario: &str,
) -> Result<Vec<Entry>, CorpusError> {
    let path = prerequisite_path(root, scenario);
    let prereq_category = format!("{category}_prereq");
    let mut entries = load_files(&path, None, &prereq_category)?;
    let documents = memory_documents(root, category)?;
    for (entry, (_, question)) in entries.iter_mut().zip(read_json_lines(&path)?) {
        memory_entry(
            entry,
            question,
            category,
            &documents,
            Some(scenario.to_string()),
        );
    }
    Ok(entries)
}

fn prerequisite_path(root: &Path, scenario: &str) -> PathBuf {
    root.join(MEMORY_PREREQ_DIR)
        .join(format!("memory_{scenario}.json"))
}

fn memory_class(category: &str) -> String {
    format!("MemoryAPI_{}", memory_backend(category).unwrap_or_default())
}

fn memory_documents(root: &Path, category: &str) -> Result<Vec<Value>, CorpusError> {
    let class = memory_class(category);
    let Some((_, file)) = API_DOC_FILES.iter().find(|(name, _)| *name == class) else {
        return Err(CorpusError::UnknownCategory(category.to_string()));
    };
    Ok(read_json_lines(&root.join(API_DOC_DIR).join(file))?
        .into_iter()
        .map(|(_, d)| d)
        .collect())
}

/// Renames the entry into `category` and points it at the category's memory backend.
fn memory_entry(
    entry: &mut Entry,
    mut question: Value,
    category: &str,
    documents: &[Value],
    scenario: Option<String>,
) {
    // Python's `str.replace`, as BFCL renames them.
    entry.id = entry.id.replace("memory", category);
    question["id"] = Value::String(entry.id.clone());
    question["involved_classes"] = serde_json::json!([memory_class(category)]);
    entry.functions = documents.to_vec();
    entry.multi_turn = Some(MultiTurn {
        question,
        held_out: BTreeMap::new(),
        scenario,
    });
}

fn read_json_lines(path: &Path) -> Result<Vec<(usize, Value)>, CorpusError> {
    let text =
        crate::base::input::read_input_to_string(path).map_err(|source| CorpusError::Io {
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

/// The `question` field of `object`: one list of messages per turn.
pub fn parse_turns(
    path: &Path,
    line: usize,
    object: &Value,
) -> Result<Vec<Vec<Message>>, CorpusError> {
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
    use std::fs;

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
    fn multi_turn_entries_take_their_classes_documents_and_hold_out_the_missed_ones() {
        let root = default_root();
        let entries = load_category(&root, "multi_turn_miss_func").unwrap();
        assert_eq!(entries.len(), 200);
        let first = &entries[0];
        let held_out = &first.multi_turn.as_ref().unwrap().held_out;
        // BFCL's file holds out `sort` at turn 3, whose question turn is empty.
        assert_eq!(held_out.keys().collect::<Vec<_>>(), [&3]);
        assert_eq!(held_out[&3][0]["name"], "sort");
        assert!(first.turns[3].is_empty());
        let names: Vec<&str> = first
            .functions
            .iter()
            .filter_map(|f| f["name"].as_str())
            .collect();
        assert!(
            names.contains(&"mv") && names.contains(&"post_tweet"),
            "{names:?}"
        );
        assert!(!names.contains(&"sort"));
        assert_eq!(
            first.ground_truth.as_ref().unwrap().len(),
            first.turns.len()
        );
    }

    #[test]
    fn a_multi_turn_error_names_file_line_and_field() {
        let root = tempfile::tempdir().unwrap();
        let question = r#"{"id": "multi_turn_base_0", "question": [[{"role": "user", "content": "hi"}]], "involved_classes": ["GorillaFileSystem", "Spaceship"], "initial_config": {}}"#;
        fs::write(
            question_path(root.path(), "multi_turn_base"),
            format!("{question}\n"),
        )
        .unwrap();
        fs::create_dir_all(root.path().join("possible_answer")).unwrap();
        fs::write(
            answer_path(root.path(), "multi_turn_base"),
            "{\"id\": \"multi_turn_base_0\", \"ground_truth\": [[\"ls()\"]]}\n",
        )
        .unwrap();
        let err = load_category(root.path(), "multi_turn_base")
            .unwrap_err()
            .to_string();
        assert!(err.contains("BFCL_v4_multi_turn_base.json:1:"), "{err}");
        assert!(err.contains("involved_classes[1]"), "{err}");
        assert!(err.contains("Spaceship"), "{err}");
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
