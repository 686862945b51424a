//! How a name or an argument value becomes a file name, in one function for the whole program:
//! fixtures named after their key, `init`'s folders named after tools, bench result files named
//! after `--result-model`.

use sha2::{Digest, Sha256};

/// The longest stem [`file_stem`] gives, in bytes: with an ending and a `-N` counter it stays far
/// below the 255 bytes a file name may hold on every common filesystem.
pub const STEM_MAX_BYTES: usize = 64;

/// A file name's stem made from `text`: letters and digits (any script), `-`, `_` and `.` are
/// kept, anything else (`/`, `\`, white space, NUL, control characters…) becomes `-`; runs of
/// `-` are one, and `-` and `.` are trimmed from both ends, so the stem is never `.`, `..`, a
/// hidden file or a path. A stem longer than [`STEM_MAX_BYTES`] is cut at a character boundary
/// and ends with `-` and 10 hex digits of the SHA-256 of the whole `text`, so that two long
/// texts with the same beginning get two names. An empty result is `empty`. Callers that need
/// two different texts to get two different files still check for a collision: two texts can
/// give the same stem (`a/b` and `a b`).
pub fn file_stem(text: &str) -> String {
    let mut stem = String::with_capacity(text.len().min(STEM_MAX_BYTES + 16));
    for c in text.chars() {
        let kept = c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
        let c = if kept { c } else { '-' };
        if c == '-' && stem.ends_with('-') {
            continue;
        }
        stem.push(c);
    }
    let trimmed = stem.trim_matches(|c| c == '-' || c == '.');
    if trimmed.is_empty() {
        return "empty".into();
    }
    if trimmed.len() <= STEM_MAX_BYTES {
        return trimmed.to_string();
    }
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().take(5).map(|b| format!("{b:02x}")).collect();
    let mut cut = STEM_MAX_BYTES - hex.len() - 1;
    while !trimmed.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = trimmed[..cut].trim_end_matches(['-', '.']);
    format!("{head}-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stem_is_never_a_path_nor_hidden_nor_long() {
        assert_eq!(file_stem("../../../x"), "x");
        assert_eq!(file_stem(".."), "empty");
        assert_eq!(file_stem("a/b\\c d"), "a-b-c-d");
        assert_eq!(file_stem("paris-texas"), "paris-texas");
        assert_eq!(file_stem("zürich"), "zürich");
        let long = "x".repeat(300);
        let stem = file_stem(&long);
        assert!(stem.len() <= STEM_MAX_BYTES, "{stem}");
        let other = file_stem(&format!("{}y", "x".repeat(299)));
        assert_ne!(stem, other);
        let wide = "é".repeat(200);
        assert!(file_stem(&wide).len() <= STEM_MAX_BYTES);
    }
}
