//! Long tool output, spilled: the model is shown a result's start and the whole text is kept
//! as a file of the conversation, which the model reads on with `read_tool_output`. Nothing
//! touches the disk: a spilled file lives as long as its conversation, so a run stays
//! reproducible and writes nowhere it should not.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::builtins::READ_TOOL_OUTPUT;
use super::tools::ToolOutput;

/// What the loop does with a tool result longer than the budget's `tool_output_chars`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LongOutput {
    /// Cut it and say how much was cut.
    #[default]
    Cut,
    /// Show its start and keep the whole as a file the model can read on.
    Spill,
}

impl LongOutput {
    pub fn name(self) -> &'static str {
        match self {
            LongOutput::Cut => "cut",
            LongOutput::Spill => "spill",
        }
    }
}

/// Cuts a tool result to `limit` characters, saying how much was cut; states an empty one.
pub fn fit_tool_output(content: &str, limit: usize) -> (String, usize) {
    if content.trim().is_empty() {
        return ("(the tool returned nothing)".to_string(), 0);
    }
    let total = content.chars().count();
    if total <= limit {
        return (content.to_string(), 0);
    }
    let kept: String = content.chars().take(limit).collect();
    let cut = total - limit;
    (format!("{kept}\n[… {cut} more characters cut]"), cut)
}

/// The files one conversation's long results were spilled to, in order.
#[derive(Debug, Clone, Default)]
pub struct SpillFiles {
    files: Vec<String>,
}

impl SpillFiles {
    fn name(index: usize) -> String {
        format!("tool-output-{}.txt", index + 1)
    }

    /// What the model is shown of `content` under `long_output`, and how many characters it
    /// was not shown; a spilled result names its file and how to read on.
    pub fn show(
        &mut self,
        content: &str,
        limit: usize,
        long_output: LongOutput,
    ) -> (String, usize) {
        let total = content.chars().count();
        if long_output == LongOutput::Cut || total <= limit || content.trim().is_empty() {
            return fit_tool_output(content, limit);
        }
        let file = Self::name(self.files.len());
        self.files.push(content.to_string());
        let kept: String = content.chars().take(limit).collect();
        (
            format!("{kept}\n{}", read_on_note(&file, limit, total)),
            total - limit,
        )
    }

    /// `read_tool_output`: `limit` characters of a spilled file from `offset`.
    pub fn read(&self, args: &Map<String, Value>, limit: usize) -> ToolOutput {
        let file = args
            .get("file")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        // A negative or broken offset is the model's mistake, said to it, not read as 0.
        let offset = match args.get("offset") {
            None | Some(Value::Null) => 0,
            Some(given) => match given.as_u64().and_then(|o| usize::try_from(o).ok()) {
                Some(offset) => offset,
                None => {
                    return ToolOutput::error(format!(
                        "offset must be a whole number from 0 (the start); got {given}."
                    ))
                }
            },
        };
        let Some(text) = (0..self.files.len())
            .find(|&i| Self::name(i) == file)
            .map(|i| &self.files[i])
        else {
            let known: Vec<String> = (0..self.files.len()).map(Self::name).collect();
            return ToolOutput::error(if known.is_empty() {
                format!("No file {file:?}: no tool result has been cut yet.")
            } else {
                format!("No file {file:?}. Files: {}.", known.join(", "))
            });
        };
        let total = text.chars().count();
        if offset >= total {
            return ToolOutput::error(format!(
                "{file} has {total} characters; offset {offset} is past its end."
            ));
        }
        let end = (offset + limit).min(total);
        let part: String = text.chars().skip(offset).take(end - offset).collect();
        if end < total {
            ToolOutput::ok(format!("{part}\n{}", read_on_note(file, end, total)))
        } else {
            ToolOutput::ok(part)
        }
    }
}

/// The line under a spilled part: how much is left, where, and the call that reads it.
fn read_on_note(file: &str, next: usize, total: usize) -> String {
    format!(
        "[… {} more characters in {file}; call {READ_TOOL_OUTPUT} with file=\"{file}\" and offset={next} to read on]",
        total - next
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(file: &str, offset: u64) -> Map<String, Value> {
        json!({"file": file, "offset": offset})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_long_result_shows_its_start_and_reads_on_to_its_end() {
        let text: String = ('a'..='z').collect();
        let mut files = SpillFiles::default();
        let (shown, cut) = files.show(&text, 10, LongOutput::Spill);
        assert_eq!(cut, 16);
        assert_eq!(
            shown,
            "abcdefghij\n[… 16 more characters in tool-output-1.txt; call read_tool_output with file=\"tool-output-1.txt\" and offset=10 to read on]"
        );
        let next = files.read(&args("tool-output-1.txt", 10), 10);
        assert!(!next.is_error);
        assert!(
            next.content.starts_with("klmnopqrst\n[… 6 more characters"),
            "{}",
            next.content
        );
        assert!(next.content.ends_with("offset=20 to read on]"));
        let last = files.read(&args("tool-output-1.txt", 20), 10);
        assert_eq!(last.content, "uvwxyz");
        assert!(files.read(&args("tool-output-1.txt", 26), 10).is_error);
        assert!(files.read(&args("tool-output-2.txt", 0), 10).is_error);
    }

    /// A change: an offset below 0 is the model's mistake, told to it.
    #[test]
    fn a_negative_offset_is_an_error_not_the_start() {
        let mut files = SpillFiles::default();
        files.show(&"x".repeat(30), 10, LongOutput::Spill);
        let read = files.read(
            json!({"file": "tool-output-1.txt", "offset": -5})
                .as_object()
                .unwrap(),
            10,
        );
        assert!(read.is_error, "{}", read.content);
        assert!(read.content.contains("got -5"), "{}", read.content);
    }

    #[test]
    fn a_short_result_or_a_cut_one_spills_nothing() {
        let mut files = SpillFiles::default();
        assert_eq!(
            files.show("short", 10, LongOutput::Spill),
            ("short".into(), 0)
        );
        let (cut, _) = files.show("0123456789abc", 10, LongOutput::Cut);
        assert_eq!(cut, "0123456789\n[… 3 more characters cut]");
        let none = files.read(&args("tool-output-1.txt", 0), 10);
        assert!(none.is_error && none.content.contains("no tool result has been cut yet"));
    }
}
