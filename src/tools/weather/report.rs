//! The text the model sees for a good answer: where, now, and three days.

use serde_json::Value;

use super::place::{first_value, ResolvedPlace};

const FORECAST_DAYS: usize = 3;
/// `hourly` has eight three-hour slots; index 4 is 12:00.
const NOON_SLOT: usize = 4;

/// How far the resolved place could be checked against what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confidence {
    /// The qualifier matched, or no qualifier was given and the city name matched.
    Verified,
    /// No qualifier was given and the resolved place does not carry the asked name.
    Unconfirmed,
    /// The city matched but the qualifier did not: same name, different state or country.
    QualifierMismatch { qualifier: String },
}

pub fn render_report(
    body: &Value,
    place: &ResolvedPlace,
    asked: &str,
    confidence: &Confidence,
) -> String {
    let mut lines = vec![headline(place, asked, confidence)];
    if let Some(now) = body.get("current_condition").and_then(|c| c.get(0)) {
        lines.push(current_line(now));
    }
    let days = body
        .get("weather")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (index, day) in days.iter().take(FORECAST_DAYS).enumerate() {
        lines.push(day_line(day, index));
    }
    lines.join("\n")
}

fn headline(place: &ResolvedPlace, asked: &str, confidence: &Confidence) -> String {
    let resolved = place.describe();
    match confidence {
        Confidence::Verified => format!("Weather for {resolved}"),
        Confidence::Unconfirmed => format!(
            "Weather for {resolved} (the service's match for \"{asked}\"; \
             not confirmed to be the place asked about)"
        ),
        Confidence::QualifierMismatch { qualifier } => format!(
            "Weather for {resolved} (asked for \"{asked}\", but this place is not in {qualifier})"
        ),
    }
}

fn field<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("?")
}

fn current_line(now: &Value) -> String {
    let mut parts = vec![format!(
        "Now: {}°C / {}°F",
        field(now, "temp_C"),
        field(now, "temp_F")
    )];
    let description = first_value(now.get("weatherDesc"));
    if !description.is_empty() {
        parts.push(description);
    }
    if now.get("FeelsLikeC").is_some() {
        parts.push(format!(
            "feels like {}°C / {}°F",
            field(now, "FeelsLikeC"),
            field(now, "FeelsLikeF")
        ));
    }
    if now.get("humidity").is_some() {
        parts.push(format!("humidity {}%", field(now, "humidity")));
    }
    if now.get("windspeedKmph").is_some() {
        parts.push(format!("wind {} km/h", field(now, "windspeedKmph")));
    }
    parts.join(", ")
}

fn day_line(day: &Value, index: usize) -> String {
    let date = field(day, "date");
    let mut line = match weekday_of(date) {
        Some(weekday) => format!("{weekday} {date}"),
        None => date.to_string(),
    };
    match index {
        0 => line.push_str(" (today)"),
        1 => line.push_str(" (tomorrow)"),
        _ => {}
    }
    line.push_str(&format!(
        ": {}–{}°C / {}–{}°F",
        field(day, "mintempC"),
        field(day, "maxtempC"),
        field(day, "mintempF"),
        field(day, "maxtempF"),
    ));
    let noon = first_value(
        day.get("hourly")
            .and_then(|hours| hours.get(NOON_SLOT))
            .and_then(|slot| slot.get("weatherDesc")),
    );
    if !noon.is_empty() {
        line.push_str(&format!(", {noon} at noon"));
    }
    line
}

/// "2026-05-16" → "Saturday", so "this weekend" questions can be answered from the dates.
pub fn weekday_of(iso_date: &str) -> Option<&'static str> {
    const NAMES: [&str; 7] = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    // Sakamoto's method, Gregorian calendar.
    const MONTH_OFFSETS: [i64; 12] = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];
    let mut parts = iso_date.splitn(3, '-').map(|part| part.parse::<i64>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let year = if month < 3 { year - 1 } else { year };
    let index =
        (year + year / 4 - year / 100 + year / 400 + MONTH_OFFSETS[month as usize - 1] + day)
            .rem_euclid(7);
    Some(NAMES[index as usize])
}

#[cfg(test)]
mod tests {
    use super::weekday_of;

    #[test]
    fn weekday_of_known_dates() {
        assert_eq!(weekday_of("2000-01-01"), Some("Saturday"));
        assert_eq!(weekday_of("2024-02-29"), Some("Thursday"));
        assert_eq!(weekday_of("2026-03-02"), Some("Monday"));
        assert_eq!(weekday_of("not-a-date"), None);
        assert_eq!(weekday_of("2026-13-01"), None);
    }
}
