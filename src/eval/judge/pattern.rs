//! What a law's regular expression can reach: a match on every text, on no text, or neither;
//! and a law's pattern compiled, refused where what it reaches makes the law useless.
//!
//! The analysis reads the pattern's syntax tree and is sound but not complete: when it says
//! `Everything` the pattern matches every text, when it says `Nothing` it matches no text, and
//! `Some` means "not proven either way". It proves `Everything` when the pattern can match the
//! empty string at the start (or at the end) of any text using only start (end) anchors:
//! `.*`, `^`, `a|`, `(?m)$`. It proves `Nothing` for an empty class (`[^\s\S]`), and for a
//! sequence that needs a character after the end of the text (`$a`, `\za`) or before its start
//! (`a^`), in every branch. It does not see through line anchors (`(?m)$a` is possible by this
//! analysis though no text matches it), word boundaries (`\ba\Bb`... is not analysed), or
//! patterns that match every text only by covering every character (`(?s).|^$`).

use regex::Regex;
use regex_syntax::hir::{Hir, HirKind, Look};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Matches every text.
    Everything,
    /// Matches no text.
    Nothing,
    /// Not proven to be either.
    Some,
}

/// What `pattern` can reach; the caller has already compiled it.
pub fn reach(pattern: &str) -> Reach {
    let Ok(hir) = regex_syntax::parse(pattern) else {
        return Reach::Some;
    };
    if impossible(&hir) {
        Reach::Nothing
    } else if empty_at(&hir, Edge::Start) || empty_at(&hir, Edge::End) {
        Reach::Everything
    } else {
        Reach::Some
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Start,
    End,
}

/// Whether `hir` matches the empty string at that edge of every text.
fn empty_at(hir: &Hir, edge: Edge) -> bool {
    match hir.kind() {
        HirKind::Empty => true,
        HirKind::Look(look) => match edge {
            Edge::Start => matches!(look, Look::Start | Look::StartLF | Look::StartCRLF),
            Edge::End => matches!(look, Look::End | Look::EndLF | Look::EndCRLF),
        },
        HirKind::Literal(_) | HirKind::Class(_) => false,
        HirKind::Repetition(rep) => rep.min == 0 || empty_at(&rep.sub, edge),
        HirKind::Capture(capture) => empty_at(&capture.sub, edge),
        HirKind::Concat(items) => items.iter().all(|item| empty_at(item, edge)),
        HirKind::Alternation(branches) => branches.iter().any(|b| empty_at(b, edge)),
    }
}

/// Whether every match of `hir` must end at the end of the text (resp. start at its start).
fn pinned_to(hir: &Hir, edge: Edge) -> bool {
    match hir.kind() {
        HirKind::Look(look) => match edge {
            Edge::Start => *look == Look::Start,
            Edge::End => *look == Look::End,
        },
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => false,
        HirKind::Repetition(rep) => rep.min > 0 && pinned_to(&rep.sub, edge),
        HirKind::Capture(capture) => pinned_to(&capture.sub, edge),
        HirKind::Concat(items) => {
            // Pinned when some item is pinned and the items on the outer side are zero-width.
            let outer_zero_width = |range: &[Hir]| {
                range
                    .iter()
                    .all(|item| item.properties().maximum_len() == Some(0))
            };
            (0..items.len()).any(|i| {
                pinned_to(&items[i], edge)
                    && match edge {
                        Edge::End => outer_zero_width(&items[i + 1..]),
                        Edge::Start => outer_zero_width(&items[..i]),
                    }
            })
        }
        HirKind::Alternation(branches) => branches.iter().all(|b| pinned_to(b, edge)),
    }
}

fn consumes(hir: &Hir) -> bool {
    hir.properties().minimum_len().is_some_and(|len| len > 0)
}

/// Whether `hir` can match no text at all.
fn impossible(hir: &Hir) -> bool {
    if hir.properties().minimum_len().is_none() {
        return true; // regex-syntax's own proof, e.g. an empty class
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) | HirKind::Literal(_) | HirKind::Class(_) => false,
        HirKind::Repetition(rep) => rep.min > 0 && impossible(&rep.sub),
        HirKind::Capture(capture) => impossible(&capture.sub),
        HirKind::Concat(items) => {
            items.iter().any(impossible)
                || items.iter().enumerate().any(|(i, item)| {
                    (pinned_to(item, Edge::End) && items[i + 1..].iter().any(consumes))
                        || (pinned_to(item, Edge::Start) && items[..i].iter().any(consumes))
                })
        }
        HirKind::Alternation(branches) => branches.iter().all(impossible),
    }
}

/// Which reach makes a pattern useless where it stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Vacuous {
    /// Matching every text or no text: either way the law's outcome is fixed.
    Both,
    /// Only matching no text (a pattern that captures values may well match anywhere).
    Nothing,
}

/// `key` is the law's key holding the pattern, named in every problem. What a pattern can
/// reach is proved by `pattern::reach`, whose limits its module doc states.
pub(super) fn compile_pattern(
    key: &str,
    pattern: &str,
    capture_groups: usize,
    vacuous: Vacuous,
) -> Result<Regex, String> {
    if pattern.is_empty() {
        return Err(format!("field `{key}`: empty pattern"));
    }
    let regex = Regex::new(pattern).map_err(|e| format!("field `{key}`: bad pattern: {e}"))?;
    if regex.captures_len() - 1 < capture_groups {
        return Err(format!(
            "field `{key}`: pattern `{pattern}` needs a capture group"
        ));
    }
    match reach(pattern) {
        Reach::Everything if vacuous == Vacuous::Both => Err(format!(
            "field `{key}`: pattern `{pattern}` matches any text"
        )),
        Reach::Nothing => Err(format!(
            "field `{key}`: pattern `{pattern}` matches no text"
        )),
        _ => Ok(regex),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_that_match_every_text() {
        for pattern in [".*", "^", "(?s).*", "a|", "(?m)$", "x*", "(^|b)", "\\z"] {
            assert_eq!(reach(pattern), Reach::Everything, "{pattern}");
        }
    }

    #[test]
    fn patterns_that_match_no_text() {
        for pattern in [
            "$a",
            "\\za",
            "a^",
            "(?:$)b",
            "($a|c\\Ad)",
            "[^\\s\\S]",
            "$(a|b)+",
        ] {
            assert_eq!(reach(pattern), Reach::Nothing, "{pattern}");
        }
    }

    #[test]
    fn ordinary_patterns_are_neither() {
        for pattern in ["(?i)sorry", "\\d+", "^a", "a$", "^$", "(?m)^Now:", "$|a"] {
            assert_ne!(reach(pattern), Reach::Nothing, "{pattern}");
        }
        for pattern in ["(?i)sorry", "\\d+", "^a", "a$", "^$", "(?m)^Now:"] {
            assert_eq!(reach(pattern), Reach::Some, "{pattern}");
        }
    }
}
