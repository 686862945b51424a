//! How laws read text: folding for comparisons, numbers as written, and the one rule for what
//! counts as a temperature.
//!
//! A **temperature** is a number followed by `°`, `C`, `F`, `degrees`, `Celsius` or
//! `Fahrenheit` (any case, with or without a space; `C` or `F` only when no letter follows, so
//! "20 Cats" is no temperature). The first number of a range ("12–18°C", "-5 to -2 degrees",
//! "between 10 and 15 degrees") takes the unit of the second. Numbers inside dates
//! ("2026-05-16") and clock times ("14:00") never count, and a number glued to letters ("H2O")
//! is a name, not a quantity.

use std::sync::OnceLock;

use regex::Regex;

/// Lowercases, drops apostrophes (so "d'Ivoire" = "dIvoire"), turns other punctuation and
/// whitespace runs into single spaces.
pub fn fold_text(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for ch in text.chars() {
        if is_apostrophe(ch) {
            continue;
        }
        if ch.is_alphanumeric() {
            folded.extend(ch.to_lowercase());
        } else if !folded.ends_with(' ') {
            folded.push(' ');
        }
    }
    folded.trim().to_string()
}

fn is_apostrophe(ch: char) -> bool {
    matches!(ch, '\'' | '’' | '‘' | '`')
}

/// The text with the possessive "'s" cut from every word ("Barcelona's" → "Barcelona").
fn without_possessives(text: &str) -> String {
    static POSSESSIVE: OnceLock<Regex> = OnceLock::new();
    let possessive = POSSESSIVE
        .get_or_init(|| Regex::new(r"(?i)(\w)['’‘`]s\b").expect("valid possessive pattern"));
    possessive.replace_all(text, "$1").into_owned()
}

/// Plain substring test, or with folding a whole-word test on folded text, where a
/// possessive names its word ("Barcelona's weather" contains "Barcelona").
pub fn contains(haystack: &str, needle: &str, fold: bool) -> bool {
    if !fold {
        return !needle.is_empty() && haystack.contains(needle);
    }
    let needle = fold_text(needle);
    if needle.is_empty() {
        return false;
    }
    let needle = format!(" {needle} ");
    [haystack.to_string(), without_possessives(haystack)]
        .iter()
        .any(|text| format!(" {} ", fold_text(text)).contains(&needle))
}

/// A decimal number written plainly. `str::parse::<f64>` alone would also read "NaN",
/// "inf" or "Infinity", which are words here (Nan is a city).
pub fn plain_number(text: &str) -> Option<f64> {
    static PLAIN: OnceLock<Regex> = OnceLock::new();
    let plain = PLAIN.get_or_init(|| {
        Regex::new(r"^[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$").expect("valid number pattern")
    });
    let text = text.trim();
    plain.is_match(text).then(|| text.parse().ok()).flatten()
}

/// A number as written: its value and how many decimals were written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WrittenNumber {
    pub value: f64,
    pub decimals: usize,
}

/// A number found in a text, with where it starts (its sign included) and ends.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FoundNumber {
    number: WrittenNumber,
    start: usize,
    end: usize,
}

fn number_regex() -> &'static Regex {
    static NUMBER: OnceLock<Regex> = OnceLock::new();
    NUMBER.get_or_init(|| Regex::new(r"\d+(?:\.\d+)?").expect("valid number pattern"))
}

/// Numbers in the text with their sign. A minus counts only when it is not a range dash
/// (i.e. not directly after a digit or letter: "10-15" is two positive numbers).
fn found_numbers(text: &str) -> Vec<FoundNumber> {
    number_regex()
        .find_iter(text)
        .filter(|m| {
            // Skip digits glued to letters ("H2O", "mp3"): they are names, not quantities.
            !text[..m.start()]
                .chars()
                .next_back()
                .is_some_and(char::is_alphabetic)
        })
        .filter_map(|m| {
            let before: Vec<char> = text[..m.start()].chars().rev().take(2).collect();
            let negative = matches!(before.first(), Some('-' | '−'))
                && !before.get(1).is_some_and(|c| c.is_alphanumeric());
            let magnitude: f64 = m.as_str().parse().ok()?;
            let decimals = m.as_str().split_once('.').map_or(0, |(_, frac)| frac.len());
            let (value, start) = if negative {
                (-magnitude, m.start() - before[0].len_utf8())
            } else {
                (magnitude, m.start())
            };
            Some(FoundNumber {
                number: WrittenNumber { value, decimals },
                start,
                end: m.end(),
            })
        })
        .collect()
}

/// Every number in the text, with the byte offset where it ends.
pub fn numbers_in(text: &str) -> Vec<(WrittenNumber, usize)> {
    found_numbers(text)
        .into_iter()
        .map(|found| (found.number, found.end))
        .collect()
}

pub fn followed_by_unit(text: &str, end: usize, units: &[String]) -> bool {
    let rest = text[end..].trim_start().to_lowercase();
    units
        .iter()
        .any(|unit| rest.starts_with(&unit.to_lowercase()))
}

pub fn round_to(value: f64, decimals: usize) -> f64 {
    let scale = 10f64.powi(decimals as i32);
    (value * scale).round() / scale
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemperatureUnit {
    Celsius,
    Fahrenheit,
}

impl TemperatureUnit {
    /// "C", "celsius", "°F", "Fahrenheit"… as a corpus field may name a unit.
    pub fn parse(name: &str) -> Option<TemperatureUnit> {
        let name = name.trim().trim_start_matches(['°', 'º']).to_lowercase();
        match name.as_str() {
            "c" | "celsius" | "centigrade" => Some(TemperatureUnit::Celsius),
            "f" | "fahrenheit" => Some(TemperatureUnit::Fahrenheit),
            _ => None,
        }
    }
}

/// A temperature as written; `unit` is `None` for a bare "°" or "degrees".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Temperature {
    pub number: WrittenNumber,
    pub unit: Option<TemperatureUnit>,
}

/// Dates and clock times, whose numbers are never temperatures.
fn dates_and_times() -> &'static Regex {
    static DATES: OnceLock<Regex> = OnceLock::new();
    DATES.get_or_init(|| {
        Regex::new(
            r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{1,2}:\d{2}(?::\d{2})?\b",
        )
        .expect("valid date pattern")
    })
}

/// Every temperature in the text, by the rule in the module doc.
pub fn temperatures_in(text: &str) -> Vec<Temperature> {
    // Dates and times become blanks of the same length, so offsets stay valid.
    let masked =
        dates_and_times().replace_all(text, |caps: &regex::Captures| " ".repeat(caps[0].len()));
    let numbers = found_numbers(&masked);
    let units: Vec<Option<Option<TemperatureUnit>>> = numbers
        .iter()
        .map(|found| unit_after(&masked[found.end..]))
        .collect();
    let mut temperatures = Vec::new();
    for (i, found) in numbers.iter().enumerate() {
        let unit = units[i].or_else(|| {
            // The first number of a range takes the unit of the second.
            let next = numbers.get(i + 1)?;
            let between = masked[found.end..next.start].trim().to_lowercase();
            let is_range = ["-", "–", "—", "to", "and"].contains(&between.as_str());
            if is_range {
                units[i + 1]
            } else {
                None
            }
        });
        if let Some(unit) = unit {
            temperatures.push(Temperature {
                number: found.number,
                unit,
            });
        }
    }
    temperatures
}

/// The temperature unit that opens `rest`: `Some(None)` for a bare "°" or "degrees",
/// `None` when `rest` does not open with a unit.
fn unit_after(rest: &str) -> Option<Option<TemperatureUnit>> {
    let rest = rest
        .trim_start_matches([' ', '\t', '\u{a0}'])
        .to_lowercase();
    if let Some(after) = ["°", "º", "˚"]
        .iter()
        .find_map(|sign| rest.strip_prefix(sign))
    {
        let after = after.trim_start_matches(' ');
        return Some(letter_unit(after).or_else(|| word_unit(after)));
    }
    if let Some(after) = strip_word(&rest, &["degrees", "degree", "deg"]) {
        let after = after.trim_start_matches(' ');
        return Some(word_unit(after).or_else(|| letter_unit(after)));
    }
    word_unit(&rest).or_else(|| letter_unit(&rest)).map(Some)
}

/// "celsius", "centigrade" or "fahrenheit" as a whole word at the start of `text`.
fn word_unit(text: &str) -> Option<TemperatureUnit> {
    if strip_word(text, &["celsius", "centigrade"]).is_some() {
        Some(TemperatureUnit::Celsius)
    } else if strip_word(text, &["fahrenheit"]).is_some() {
        Some(TemperatureUnit::Fahrenheit)
    } else {
        None
    }
}

/// A lone "c" or "f" at the start of `text`, not starting a longer word.
fn letter_unit(text: &str) -> Option<TemperatureUnit> {
    let unit = match text.chars().next()? {
        'c' => TemperatureUnit::Celsius,
        'f' => TemperatureUnit::Fahrenheit,
        _ => return None,
    };
    let glued = text[1..].chars().next().is_some_and(char::is_alphanumeric);
    (!glued).then_some(unit)
}

/// The text after one of `words`, when it opens `text` as a whole word.
fn strip_word<'t>(text: &'t str, words: &[&str]) -> Option<&'t str> {
    words.iter().find_map(|word| {
        let after = text.strip_prefix(word)?;
        let glued = after.chars().next().is_some_and(char::is_alphanumeric);
        (!glued).then_some(after)
    })
}

/// Whether `source` supports the `claim`: same value (or, with rounding, the source rounded
/// to the claim's decimals), and the same unit when both name one.
pub fn supports(source: &Temperature, claim: &Temperature, allow_rounding: bool) -> bool {
    let units_agree = match (claim.unit, source.unit) {
        (Some(claimed), Some(given)) => claimed == given,
        _ => true,
    };
    let (claimed, given) = (claim.number, source.number);
    units_agree
        && (given.value == claimed.value
            || (allow_rounding && round_to(given.value, claimed.decimals) == claimed.value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use TemperatureUnit::{Celsius, Fahrenheit};

    fn read(text: &str) -> Vec<(f64, Option<TemperatureUnit>)> {
        temperatures_in(text)
            .into_iter()
            .map(|t| (t.number.value, t.unit))
            .collect()
    }

    #[test]
    fn a_number_with_a_unit_is_a_temperature_in_every_spelling() {
        assert_eq!(read("It is 20C"), vec![(20.0, Some(Celsius))]);
        assert_eq!(read("68 F"), vec![(68.0, Some(Fahrenheit))]);
        assert_eq!(
            read("21°C and 70 °F"),
            vec![(21.0, Some(Celsius)), (70.0, Some(Fahrenheit))]
        );
        assert_eq!(read("-3 degrees"), vec![(-3.0, None)]);
        assert_eq!(read("15 celsius"), vec![(15.0, Some(Celsius))]);
        assert_eq!(
            read("15 Degrees Fahrenheit"),
            vec![(15.0, Some(Fahrenheit))]
        );
        assert_eq!(read("about 9° out"), vec![(9.0, None)]);
        assert_eq!(read("21.5ºc."), vec![(21.5, Some(Celsius))]);
    }

    #[test]
    fn letters_that_start_a_word_and_other_numbers_are_not_temperatures() {
        assert!(read("20 Cats and 5 fish").is_empty());
        assert!(read("humidity 80%, wind 12 km/h, 3 days").is_empty());
        assert!(read("Saturday 2026-05-16 Forecast at 14:00 Celsius").is_empty());
        assert!(read("H2O F").is_empty());
    }

    #[test]
    fn ranges_give_both_ends_the_unit() {
        assert_eq!(
            read("Saturday 2026-05-16 (tomorrow): 12–18°C / 54–64°F"),
            vec![
                (12.0, Some(Celsius)),
                (18.0, Some(Celsius)),
                (54.0, Some(Fahrenheit)),
                (64.0, Some(Fahrenheit))
            ]
        );
        assert_eq!(read("-5 to -2 degrees"), vec![(-5.0, None), (-2.0, None)]);
        assert_eq!(
            read("10-15C"),
            vec![(10.0, Some(Celsius)), (15.0, Some(Celsius))]
        );
    }

    #[test]
    fn support_respects_units_and_rounding() {
        let t = |value: f64, decimals, unit| Temperature {
            number: WrittenNumber { value, decimals },
            unit,
        };
        let source = t(21.6, 1, Some(Celsius));
        assert!(supports(&source, &t(22.0, 0, Some(Celsius)), true));
        assert!(!supports(&source, &t(22.0, 0, Some(Celsius)), false));
        assert!(supports(&source, &t(22.0, 0, None), true));
        assert!(!supports(&source, &t(22.0, 0, Some(Fahrenheit)), true));
    }

    #[test]
    fn a_possessive_names_its_word() {
        assert!(contains("Barcelona's weather is fine", "Barcelona", true));
        assert!(contains("In St. John's it rains", "St. John's", true));
        assert!(!contains("Barcelonans are fine", "Barcelona", true));
    }
}
