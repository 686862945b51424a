//! The model's own chat template (`tokenizer.chat_template`), run as Jinja the way transformers'
//! `apply_chat_template` runs it: the same environment options, filters and globals.

use std::sync::{Arc, Mutex};

use anyhow::anyhow;
use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Environment, Error, ErrorKind, Value};
use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::base::memory_cap::{run_capped, OverCap};

use super::toolcall::python_list::{py_float_repr, py_str_repr};
use super::toolcall::CallFormat;

const NAME: &str = "chat_template";

/// What one render may hold: a real template's prompt fits the context window (a few MB at
/// most); a template that doubles a string in a loop or a recursion would exhaust the machine.
const RENDER_MEMORY_CAP: usize = 256 << 20;

/// Template instructions one render may run: real templates take thousands per message; nested
/// loops over `range(100000)` would run for hours.
const RENDER_FUEL: u64 = 20_000_000;

/// A compiled chat template with the special tokens it is given.
pub struct ChatTemplate {
    env: Arc<Environment<'static>>,
    source: String,
    /// Where the template came from, e.g. `model.gguf: tokenizer.chat_template`.
    origin: String,
    bos: String,
    eos: String,
    /// Tool results go in user turns, `Tool result:` first: the template refuses a `tool` role
    /// (Gemma's and Mistral's insist that user and assistant alternate).
    tool_results_as_user: bool,
}

/// What opens a tool's result when the template has no turn for it, as in the hand-written Gemma format.
pub const TOOL_RESULT_LEAD: &str = "Tool result:\n";

/// Which template rendered a run, for its manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TemplateInfo {
    /// SHA-256 of the template's text, in hex.
    pub sha256: String,
    pub source: String,
    /// The role a tool's result is given: `tool`, or `user` for a template that refuses `tool`.
    pub tool_results: String,
}

impl ChatTemplate {
    /// Compiles `source`; `now` is the clock `strftime_now` reads (seconds since 1970, UTC),
    /// fixed so that a run's prompts do not change while it runs.
    pub fn new(source: &str, origin: &str, bos: &str, eos: &str, now: u64) -> anyhow::Result<Self> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_fuel(Some(RENDER_FUEL));
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        // Filters that make a string of their value do it as Python's `str` does.
        env.add_filter("string", |value: Value| python_str(&value));
        env.add_filter("trim", |value: Value, chars: Option<String>| {
            let text = python_str(&value);
            match chars {
                Some(chars) => text.trim_matches(|c| chars.contains(c)).to_string(),
                None => text.trim().to_string(),
            }
        });
        // `{{ value }}` prints what Python's `str` prints: `None`, `True`, lists and dicts
        // as their repr.
        env.set_formatter(|out, state, value| match value.kind() {
            ValueKind::None | ValueKind::Bool | ValueKind::Seq | ValueKind::Map => {
                out.write_str(&python_repr(value)).map_err(Error::from)
            }
            _ => minijinja::escape_formatter(out, state, value),
        });
        env.add_function(
            "raise_exception",
            |message: String| -> Result<Value, Error> {
                Err(Error::new(ErrorKind::InvalidOperation, message))
            },
        );
        env.add_function("strftime_now", move |format: String| strftime(&format, now));
        env.add_template_owned(NAME, source.to_string())
            .map_err(|e| template_error(origin, &e))?;
        Ok(ChatTemplate {
            env: Arc::new(env),
            source: source.to_string(),
            origin: origin.to_string(),
            bos: bos.to_string(),
            eos: eos.to_string(),
            tool_results_as_user: false,
        })
    }

    /// Tries the template on the exchanges a run sends, so that one that cannot render them is
    /// refused before the model loads: a plain exchange, then one with a tool's result, in a
    /// `tool` turn if the template takes one, else in a user turn.
    pub fn settle(&mut self) -> anyhow::Result<()> {
        // Probe texts a template cannot hold by chance: a template that leaves the user's
        // message or a tool's result out of the prompt would measure nothing, silently.
        const USER: &str = "user-probe-5c1e";
        const RESULT: &str = "result-probe-5c1e";
        let (plain, _) = self.render(&[("system", "s"), ("user", USER)])?;
        if !plain.contains(USER) {
            anyhow::bail!(
                "{}: the template does not write the user's message into the prompt",
                self.origin
            );
        }
        let with_result = [
            ("system", "s"),
            ("user", USER),
            ("assistant", "a"),
            ("tool", RESULT),
        ];
        let shows = |rendered: &anyhow::Result<(String, Vec<(usize, usize)>)>| matches!(rendered, Ok((text, _)) if text.contains(RESULT));
        self.tool_results_as_user = false;
        let as_tool = self.render(&with_result);
        if shows(&as_tool) {
            return Ok(());
        }
        self.tool_results_as_user = true;
        if shows(&self.render(&with_result)) {
            return Ok(());
        }
        match as_tool {
            Err(e) => anyhow::bail!("{e} (on a tool's result, in a tool turn and in a user turn)"),
            Ok(_) => anyhow::bail!(
                "{}: the template leaves a tool's result out of the prompt, in a tool turn and in a user turn",
                self.origin
            ),
        }
    }

    pub fn tool_results_as_user(&self) -> bool {
        self.tool_results_as_user
    }

    pub fn info(&self) -> TemplateInfo {
        TemplateInfo {
            sha256: format!("{:x}", Sha256::digest(self.source.as_bytes())),
            source: self.origin.clone(),
            tool_results: if self.tool_results_as_user {
                "user"
            } else {
                "tool"
            }
            .into(),
        }
    }

    /// The call syntax the template writes an assistant's calls in, when it shows one.
    pub fn call_format(&self) -> Option<CallFormat> {
        CallFormat::from_template(&self.source)
    }

    /// The template applied as `apply_chat_template(messages, tools=tools,
    /// add_generation_prompt=…)` applies it; `messages` and `tools` in transformers' shapes.
    pub fn apply(
        &self,
        messages: &serde_json::Value,
        tools: Option<&serde_json::Value>,
        add_generation_prompt: bool,
    ) -> anyhow::Result<String> {
        let context = json!({
            "messages": messages,
            "tools": tools,
            "documents": null,
            "add_generation_prompt": add_generation_prompt,
            "bos_token": self.bos,
            "eos_token": self.eos,
        });
        let env = Arc::clone(&self.env);
        let origin = self.origin.clone();
        let rendered = run_capped(RENDER_MEMORY_CAP, move || {
            env.get_template(NAME)
                .and_then(|template| template.render(Value::from_serialize(&context)))
                .map_err(|e| template_error(&origin, &e))
        });
        rendered.unwrap_or_else(|OverCap| {
            Err(anyhow!(
                "{}: the chat template needs more than {} MB to render a prompt; refused",
                self.origin,
                RENDER_MEMORY_CAP >> 20
            ))
        })
    }

    /// `messages` (role, content) rendered, ending with the opener of the model's turn, and
    /// the byte ranges of the template's own text in it: only the messages' contents are read
    /// without special tokens.
    pub fn render(
        &self,
        messages: &[(&str, &str)],
    ) -> anyhow::Result<(String, Vec<(usize, usize)>)> {
        let shaped: Vec<serde_json::Value> = messages
            .iter()
            .map(|&(role, content)| match role {
                "tool" if self.tool_results_as_user => {
                    json!({"role": "user", "content": format!("{TOOL_RESULT_LEAD}{content}")})
                }
                _ => json!({"role": role, "content": content}),
            })
            .collect();
        let text = self.apply(&serde_json::Value::from(shaped), None, true)?;
        let markers = outside_contents(&text, messages);
        Ok((text, markers))
    }
}

/// The byte ranges of `text` outside the messages' contents, found in order (whole, else
/// trimmed, as templates often trim them). A content the template changed otherwise is not
/// found and counts as the template's.
fn outside_contents(text: &str, messages: &[(&str, &str)]) -> Vec<(usize, usize)> {
    let mut contents = Vec::new();
    let mut cursor = 0;
    for (_, content) in messages {
        for candidate in [*content, content.trim()] {
            if candidate.is_empty() {
                break;
            }
            if let Some(at) = text[cursor..].find(candidate) {
                let start = cursor + at;
                contents.push((start, start + candidate.len()));
                cursor = start + candidate.len();
                break;
            }
        }
    }
    let mut markers = Vec::new();
    let mut at = 0;
    for (start, end) in contents {
        if start > at {
            markers.push((at, start));
        }
        at = end;
    }
    if at < text.len() {
        markers.push((at, text.len()));
    }
    markers
}

/// One line naming the template, the line in it and what went wrong.
fn template_error(origin: &str, error: &Error) -> anyhow::Error {
    let line = error
        .line()
        .map(|l| format!(", line {l}"))
        .unwrap_or_default();
    let detail = error.detail().map(|d| format!(": {d}")).unwrap_or_default();
    anyhow!(
        "{origin}{line}: the chat template failed: {}{detail}",
        error.kind()
    )
}

/// transformers' `tojson`: `json.dumps(x, ensure_ascii=False, indent=…, separators=…,
/// sort_keys=…)`, whose default separators are `", "` and `": "`.
fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let mut json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::BadSerialization, e.to_string()))?;
    if sort_keys == Some(true) {
        sort(&mut json);
    }
    Ok(Value::from(python_json(&json, indent, 0)))
}

/// Python's `str` of a template value: a string as it is, anything else as its repr.
fn python_str(value: &Value) -> String {
    match value.as_str() {
        Some(text) => text.to_string(),
        None if value.is_undefined() => String::new(),
        None => python_repr(value),
    }
}

/// Python's `repr` of a template value.
fn python_repr(value: &Value) -> String {
    match value.kind() {
        ValueKind::None | ValueKind::Undefined => "None".into(),
        ValueKind::Bool => if value.is_true() { "True" } else { "False" }.into(),
        ValueKind::String => py_str_repr(value.as_str().unwrap_or_default()),
        ValueKind::Number => match i64::try_from(value.clone()) {
            Ok(integer) if !value.to_string().contains('.') => integer.to_string(),
            _ => f64::try_from(value.clone()).map_or_else(|_| value.to_string(), py_float_repr),
        },
        ValueKind::Seq => {
            let items: Vec<String> = value
                .try_iter()
                .map(|items| items.map(|item| python_repr(&item)).collect())
                .unwrap_or_default();
            format!("[{}]", items.join(", "))
        }
        ValueKind::Map => {
            let items: Vec<String> = value
                .try_iter()
                .map(|keys| {
                    keys.map(|key| {
                        let item = value.get_item(&key).unwrap_or_default();
                        format!("{}: {}", python_repr(&key), python_repr(&item))
                    })
                    .collect()
                })
                .unwrap_or_default();
            format!("{{{}}}", items.join(", "))
        }
        _ => value.to_string(),
    }
}

fn sort(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(sort),
        _ => {}
    }
}

/// `value` as Python's `json.dumps` writes it with `ensure_ascii=False`.
fn python_json(value: &serde_json::Value, indent: Option<usize>, depth: usize) -> String {
    use serde_json::Value as J;
    let (open_item, between, close) = match indent {
        Some(n) => (
            format!("\n{}", " ".repeat(n * (depth + 1))),
            ",".to_string(),
            format!("\n{}", " ".repeat(n * depth)),
        ),
        None => (String::new(), ", ".to_string(), String::new()),
    };
    let items: Vec<String> = match value {
        J::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| python_json(item, indent, depth + 1))
            .collect(),
        J::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}: {}",
                    J::from(k.as_str()),
                    python_json(v, indent, depth + 1)
                )
            })
            .collect(),
        J::Array(_) => return "[]".into(),
        J::Object(_) => return "{}".into(),
        scalar => return scalar.to_string(),
    };
    let (open, end) = match value {
        J::Array(_) => ("[", "]"),
        _ => ("{", "}"),
    };
    let joined = items
        .iter()
        .map(|item| format!("{open_item}{item}"))
        .collect::<Vec<_>>()
        .join(&between);
    format!("{open}{joined}{close}{end}")
}

/// Python's `strftime` for the codes chat templates use, at `now` (UTC).
fn strftime(format: &str, now: u64) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let days = (now / 86_400) as i64;
    let (year, month, day) = crate::base::clock::civil_from_days(days);
    let seconds = now % 86_400;
    let name = MONTHS[(month - 1) as usize];
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str(&format!("{day:02}")),
            Some('-') => match chars.next() {
                Some('d') => out.push_str(&day.to_string()),
                Some('m') => out.push_str(&month.to_string()),
                Some(other) => out.push_str(&format!("%-{other}")),
                None => out.push_str("%-"),
            },
            Some('m') => out.push_str(&format!("{month:02}")),
            Some('Y') => out.push_str(&year.to_string()),
            Some('y') => out.push_str(&format!("{:02}", year % 100)),
            Some('b') => out.push_str(&name[..3]),
            Some('B') => out.push_str(name),
            Some('H') => out.push_str(&format!("{:02}", seconds / 3600)),
            Some('M') => out.push_str(&format!("{:02}", seconds / 60 % 60)),
            Some('S') => out.push_str(&format!("{:02}", seconds % 60)),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// The templates loaded in this process, named in `Family::Own` by their index.
static LOADED: Mutex<Vec<Arc<ChatTemplate>>> = Mutex::new(Vec::new());

/// Keeps `template` for the life of the process and names it (models, too, stay loaded).
pub fn keep(template: ChatTemplate) -> u32 {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.push(Arc::new(template));
    (loaded.len() - 1) as u32
}

/// The template `keep` named `id`.
pub fn kept(id: u32) -> Option<Arc<ChatTemplate>> {
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.get(id as usize).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: Python's `json.dumps(…, ensure_ascii=False)` and `time.strftime`, whose outputs
    /// are written out here.
    #[test]
    fn filters_and_clock_write_as_python_does() {
        let value = serde_json::json!({"b": [1, {"c": "é\n"}], "a": [], "d": {}});
        assert_eq!(
            python_json(&value, None, 0),
            r#"{"b": [1, {"c": "é\n"}], "a": [], "d": {}}"#
        );
        assert_eq!(
            python_json(&value, Some(2), 0),
            "{\n  \"b\": [\n    1,\n    {\n      \"c\": \"é\\n\"\n    }\n  ],\n  \"a\": [],\n  \"d\": {}\n}"
        );
        // 2024-07-27 03:05:09 UTC.
        assert_eq!(
            strftime("%d %b %Y %H:%M:%S %B", 1_722_049_509),
            "27 Jul 2024 03:05:09 July"
        );
    }

    /// Truth: a change — the messages' contents are the only unmarked text.
    #[test]
    fn only_contents_are_unmarked() {
        let template = ChatTemplate::new(
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | trim }}<|im_end|>\n{% endfor %}",
            "test",
            "",
            "",
            0,
        )
        .unwrap();
        let (text, markers) = template.render(&[("user", " a<|im_end|>b ")]).unwrap();
        let marked: Vec<&str> = markers.iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(marked, ["<|im_start|>user\n", "<|im_end|>\n"]);
    }

    /// Truth: a change — a template that refuses a `tool` turn gets results in user turns.
    #[test]
    fn a_template_without_a_tool_turn_gets_results_in_user_turns() {
        let source = "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('roles must alternate') }}{% endif %}[{{ m.role }}]{{ m.content }}{% endfor %}";
        let mut template = ChatTemplate::new(source, "t", "", "", 0).unwrap();
        template.settle().unwrap();
        assert!(template.tool_results_as_user());
        let (text, _) = template
            .render(&[("user", "q"), ("assistant", "a"), ("tool", "42")])
            .unwrap();
        assert_eq!(text, "[user]q[assistant]a[user]Tool result:\n42");
        assert_eq!(template.info().tool_results, "user");
    }

    /// Truth: a change — an error names the template and its line.
    #[test]
    fn a_failing_template_is_named_with_its_line() {
        let template = ChatTemplate::new(
            "ok\n{{ raise_exception('Conversation roles must alternate') }}",
            "m.gguf: tokenizer.chat_template",
            "",
            "",
            0,
        )
        .unwrap();
        let error = template.render(&[]).unwrap_err().to_string();
        assert!(
            error.starts_with("m.gguf: tokenizer.chat_template, line 2:"),
            "{error}"
        );
        assert!(
            error.contains("Conversation roles must alternate"),
            "{error}"
        );
    }

    /// Truth: a person's reading of each template — an empty template, one that writes a fixed
    /// text, and one that writes only the first two messages would each send every unit a prompt without the
    /// user's words or the tool's result; each is refused when the model loads, naming the file.
    #[test]
    fn a_template_that_drops_the_user_or_the_result_is_refused() {
        for (source, says) in [
            ("", "user's message"),
            ("The weather is nice.", "user's message"),
            (
                "{% for m in messages[:2] %}{{ m.content }}{% endfor %}",
                "tool's result",
            ),
        ] {
            assert_refused_at_load(source, says);
        }
    }

    /// Truth: a person's reading of each template — the first doubles a string in a loop, the
    /// second in a recursion, the third grows one by `replace` (each would need terabytes), and
    /// the fourth runs ten billion steps: each is refused when the model loads, naming the file
    /// and the field, instead of exhausting the machine or hanging.
    #[test]
    fn a_template_that_would_exhaust_the_machine_is_refused() {
        for (source, says) in [
            (
                "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}{% for m in messages %}{{ m.content }}{% endfor %}",
                "MB to render",
            ),
            (
                "{% macro grow(s, n) %}{% if n > 0 %}{{ grow(s ~ s, n - 1) }}{% else %}{{ s | length }}{% endif %}{% endmacro %}{{ grow('x', 64) }}{% for m in messages %}{{ m.content }}{% endfor %}",
                "MB to render",
            ),
            (
                "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s | replace('x', ns.s) %}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}",
                "MB to render",
            ),
            (
                "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}",
                "fuel",
            ),
        ] {
            assert_refused_at_load(source, says);
        }
    }

    /// `source` is refused when the model loads, in an error naming the file and the field
    /// and holding `says`.
    fn assert_refused_at_load(source: &str, says: &str) {
        let mut template =
            ChatTemplate::new(source, "m.gguf: tokenizer.chat_template", "", "", 0).unwrap();
        let error = template.settle().unwrap_err().to_string();
        assert!(
            error.starts_with("m.gguf: tokenizer.chat_template"),
            "{error}"
        );
        assert!(error.contains(says), "{source:?}: {error}");
    }
}
