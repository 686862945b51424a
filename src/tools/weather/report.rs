//! The text the model sees for a good answer: where, now, and three days.

use serde_json::Value;

use super::place::{first_value, ResolvedPlace};

const FORECAST_DAYS: usize = 3;
/// `hourly` has eight three-hour slots; index 4 is 12:00, whose sky stands for the day.
const NOON_SLOT: usize = 4;
/// The first two forecast days are named as well as dated.
const DAY_LABELS: [&str; 2] = ["today", "tomorrow"];

/// The report: the resolved place, the conditions now, then one line per forecast day.
/// `verified` says whether the place was checked to be the one asked for; when it was not, the
/// first line says so and names what was asked.
pub fn render_report(body: &Value, place: &ResolvedPlace, asked: &str, verified: bool) -> String {
    let mut lines = vec![headline(place, asked, verified)];
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

fn headline(place: &ResolvedPlace, asked: &str, verified: bool) -> String {
    let resolved = place.describe();
    if verified {
        resolved
    } else {
        format!("{resolved} (not \"{asked}\" — this is where it resolved)")
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
        parts.push(format!("feels like {}°C", field(now, "FeelsLikeC")));
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
    let mut line = field(day, "date").to_string();
    if let Some(label) = DAY_LABELS.get(index) {
        line.push_str(&format!(" ({label})"));
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
        line.push_str(&format!(", {noon}"));
    }
    line
}
