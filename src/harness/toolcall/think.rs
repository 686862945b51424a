//! `<think>…</think>` blocks taken out of a reply before its calls and prose are read.
//!
//! Reasoning models (Qwen 3, DeepSeek R1 distils) think aloud first; what they write there is
//! not an answer, and a call they draft there is not a call. A template that opens the block in
//! its generation prompt leaves the reply starting inside it, with only the closer written.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// `text` without its thinking: every closed block, a leading part closed by a `</think>`
/// whose opener was in the prompt, and an unclosed block at the end (a reply cut off while
/// thinking). `None` when there is nothing to take out.
pub fn strip_thinking(text: &str) -> Option<String> {
    if !text.contains(OPEN) && !text.contains(CLOSE) {
        return None;
    }
    let mut rest = text;
    // A closer before any opener ends a block the prompt opened.
    if let Some(close) = rest.find(CLOSE) {
        if rest.find(OPEN).is_none_or(|open| close < open) {
            rest = &rest[close + CLOSE.len()..];
        }
    }
    let mut kept = String::with_capacity(rest.len());
    while let Some(open) = rest.find(OPEN) {
        kept.push_str(&rest[..open]);
        let inside = &rest[open + OPEN.len()..];
        match inside.find(CLOSE) {
            Some(close) => rest = &inside[close + CLOSE.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    kept.push_str(rest);
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: a change (the expected text is written out by hand from the rule above).
    #[test]
    fn thinking_is_taken_out_wherever_it_stands() {
        assert_eq!(strip_thinking("plain"), None);
        assert_eq!(
            strip_thinking("<think>\nmaybe f()\n</think>\n\nThe answer.").as_deref(),
            Some("\n\nThe answer.")
        );
        assert_eq!(
            strip_thinking("the prompt opened it</think>Done.").as_deref(),
            Some("Done.")
        );
        assert_eq!(
            strip_thinking("A<think>x</think>B<think>cut off").as_deref(),
            Some("AB")
        );
    }
}
