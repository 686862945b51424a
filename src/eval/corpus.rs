//! A corpus: JSONL, one sample a line (`id`, `prompt` or `messages`, `category`, and any fields
//! laws read). Errors name the file, the line and the field.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{anyhow, bail};
use serde_json::{Map, Value};

use crate::harness::conversation::Script;
use crate::harness::template::{Message, Role};

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub id: String,
    pub category: String,
    /// The line of the corpus file it was read from, 1-based, for messages.
    pub line: usize,
    /// The conversation, ending with the user's message.
    pub messages: Vec<Message>,
    /// Every field of the line, for laws to read.
    pub fields: Map<String, Value>,
    /// The user's side of a conversation (`user`): without it the run ends at the first answer.
    pub user: Option<Script>,
}

impl Sample {
    /// The last user message: what the model is asked.
    pub fn prompt_text(&self) -> &str {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
            .unwrap_or("")
    }
}

fn field_str(obj: &Map<String, Value>, key: &str, at: &str) -> anyhow::Result<String> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => bail!("{at}: field `{key}` is empty"),
        Some(_) => bail!("{at}: field `{key}` must be a string"),
        None => bail!("{at}: field `{key}` is missing"),
    }
}

fn parse_messages(value: &Value, at: &str) -> anyhow::Result<Vec<Message>> {
    let list = value
        .as_array()
        .ok_or_else(|| anyhow!("{at}: field `messages` must be a list of {{role, content}}"))?;
    let mut out = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let role = match m["role"].as_str() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("system") => Role::System,
            Some("tool") => Role::Tool,
            _ => bail!("{at}: field `messages[{i}].role` must be user, assistant, system or tool"),
        };
        let content = m["content"]
            .as_str()
            .ok_or_else(|| anyhow!("{at}: field `messages[{i}].content` must be a string"))?;
        out.push(Message::new(role, content));
    }
    if out.last().map(|m| m.role) != Some(Role::User) {
        bail!("{at}: field `messages` must end with a user message");
    }
    Ok(out)
}

pub fn parse_corpus(text: &str, path: &Path) -> anyhow::Result<Vec<Sample>> {
    let mut samples = Vec::new();
    let mut seen = BTreeSet::new();
    // Editors on some systems open a file with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        let value: Value =
            serde_json::from_str(line).map_err(|e| anyhow!("{at}: not valid JSON: {e}"))?;
        let Value::Object(fields) = value else {
            bail!("{at}: a sample must be a JSON object");
        };
        if let Some(repeated) = repeated_key(line) {
            bail!("{at}: {repeated}");
        }
        let id = field_str(&fields, "id", &at)?;
        if !seen.insert(id.clone()) {
            bail!("{at}: field `id`: {id:?} is used twice");
        }
        let category = field_str(&fields, "category", &at)?;
        let messages = match (fields.get("prompt"), fields.get("messages")) {
            (Some(_), Some(_)) => bail!("{at}: fields `prompt` and `messages` exclude each other"),
            (Some(_), None) => vec![Message::user(field_str(&fields, "prompt", &at)?)],
            (None, Some(m)) => parse_messages(m, &at)?,
            (None, None) => bail!("{at}: field `prompt` is missing (or give `messages`)"),
        };
        let user = match fields.get("user") {
            None | Some(Value::Null) => None,
            Some(value) => Some(Script::from_value(value).map_err(|e| anyhow!("{at}: {e}"))?),
        };
        samples.push(Sample {
            id,
            category,
            line: index + 1,
            messages,
            fields,
            user,
        });
    }
    if samples.is_empty() {
        bail!("{}: the corpus has no samples", path.display());
    }
    Ok(samples)
}

pub fn load_corpus(path: &Path) -> anyhow::Result<Vec<Sample>> {
    let bytes = crate::base::input::read_input(path)
        .map_err(|e| anyhow!("{}: cannot read corpus: {e}", path.display()))?;
    let text = crate::base::input::utf8_text(bytes).map_err(|e| anyhow!(e.at(path)))?;
    parse_corpus(&text, path)
}

/// A JSON object whose keys must differ: `{"id": "a", "id": "b"}` would otherwise keep the last
/// in silence.
struct UniqueKeys;

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<serde::de::IgnoredAny>()?;
            if !keys.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "field `{key}` appears twice"
                )));
            }
        }
        Ok(())
    }
}

/// The first key an object line holds twice, if any.
fn repeated_key(line: &str) -> Option<String> {
    use serde::Deserializer;
    let mut de = serde_json::Deserializer::from_str(line);
    de.deserialize_map(UniqueKeys).err().map(|e| {
        let text = e.to_string();
        text.split(" at line").next().unwrap_or(&text).to_string()
    })
}

/// A stable digest of the corpus file, for the manifest.
pub fn digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(text.as_bytes()))
}
