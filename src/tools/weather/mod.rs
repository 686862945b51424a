//! `weather_lookup`: current weather and a three-day forecast from wttr.in's `j1` JSON.
//!
//! The geocoder behind wttr.in answers 200 for almost any string, landing on whatever is nearest
//! (a bare "Rome" lands in Lomé, Togo). So the tool, not the model, compares the place it got
//! against the state or country that was asked for, refuses a contradiction, and names the
//! resolved place on the first line of every report.

mod client;
mod place;
mod report;

use std::sync::Arc;

use regex::Regex;
use serde_json::{json, Map, Value};

use crate::harness::tools::{Effect, ToolDef, ToolOutput};

pub use client::{
    is_public_address, percent_encode, resolve_public, BlockedAddress, FetchError, Fetched,
    WeatherService, DEFAULT_BASE_URL, DEFAULT_TIMEOUT, MAX_BODY_BYTES, USER_AGENT,
};
pub use place::{
    check_qualifier, city_matches, city_of, fold, known_qualifier, qualifier_of, QualifierVerdict,
    ResolvedPlace, ALIAS_GROUPS,
};
pub use report::render_report;

pub const TOOL_NAME: &str = "weather_lookup";
/// The tool is offered only once this skill is loaded.
pub const SKILL_NAME: &str = "weather";
/// The service as the model's answers name it, whatever address a test points the client at.
const SERVICE_HOST: &str = "wttr.in";

const TOOL_DESCRIPTION: &str = "Weather now and for the next three days, from a weather \
service. Its answer opens with the place the service found, which your reply should name. Call \
it whenever the user wants to know about weather, rain, temperatures or a forecast somewhere.";

const LOCATION_DESCRIPTION: &str = "Where to look, in the user's own words, with any state or \
country they gave after a comma: \"Paris, Texas\", \"Nassau, Bahamas\", \"Madrid\".";

/// JSON schema of the arguments: one required string.
pub fn parameters_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "location": {
                "type": "string",
                "description": LOCATION_DESCRIPTION,
            }
        },
        "required": ["location"],
    })
}

/// The live tool, answering through `service`. Recorded answers are replayed by the pack
/// runner (`eval::replay`) through the same `location_argument` and `render_result`.
pub fn tool_def(service: Arc<WeatherService>) -> ToolDef {
    ToolDef::new(
        TOOL_NAME,
        TOOL_DESCRIPTION,
        parameters_schema(),
        Effect::Read,
        move |arguments: &Map<String, Value>| match location_argument(arguments) {
            Ok(location) => service.lookup(location),
            Err(problem) => problem,
        },
    )
    .gated_by(SKILL_NAME)
}

/// The trimmed `location` argument, or the answer the model gets for a missing or empty one.
pub fn location_argument(arguments: &Map<String, Value>) -> Result<&str, ToolOutput> {
    let location = arguments
        .get("location")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    // A location with no letter or digit would reach the service as an empty path, which it
    // answers with the weather wherever the caller is; it gets the empty one's answer.
    if location.chars().any(char::is_alphanumeric) {
        Ok(location)
    } else {
        Err(ToolOutput::error("location must be a non-empty string"))
    }
}

impl WeatherService {
    /// Fetches and renders; never fails, because every failure is something to tell the model.
    pub fn lookup(&self, location: &str) -> ToolOutput {
        let location = location.trim();
        match self.fetch(location) {
            Ok(fetched) => render_result(location, fetched.status, &fetched.body),
            Err(FetchError::TimedOut(limit)) => ToolOutput::error(format!(
                "{TOOL_NAME} timed out after {} ms",
                limit.as_millis()
            ))
            .with_meta(json!({"outcome": "unavailable"})),
            Err(FetchError::Redirected { .. }) => ToolOutput::error(format!(
                "{SERVICE_HOST} redirected the lookup for \"{location}\""
            ))
            .with_meta(json!({"outcome": "unavailable"})),
            Err(err) => unavailable(&err.to_string()),
        }
    }
}

/// Turns a raw answer (live or recorded) into what the model sees. Pure.
///
/// "No such place" answers are not errors: the service worked and the answer is that the place
/// does not exist, which the model should pass on as it would a forecast. A body that says the
/// place is not found is read so whatever its status; any other status but 200 is an outage.
pub fn render_result(location: &str, status: u16, body: &str) -> ToolOutput {
    let location = location.trim();
    if says_not_found(body) {
        return no_such_place(location);
    }
    if status != 200 {
        return unavailable(&format!("it answered HTTP {status}"));
    }
    let Ok(parsed) = serde_json::from_str::<Value>(body) else {
        return unavailable("it did not return a forecast");
    };
    let Some(place) = ResolvedPlace::from_j1(&parsed) else {
        return no_such_place(location);
    };

    let named = city_matches(location, &place);
    let verdict = qualifier_of(location).map(|qualifier| check_qualifier(qualifier, &place));
    // The asked qualifier contradicts the answer and not even the city matches: another place.
    if verdict == Some(QualifierVerdict::Contradicts) && !named {
        return ToolOutput::ok(format!(
            "No such place: \"{location}\". {SERVICE_HOST} resolved it to {}, which is somewhere else.",
            place.describe()
        ))
        .with_meta(json!({
            "outcome": "resolved_elsewhere",
            "resolved": place.describe(),
        }));
    }
    // A qualifier decides when there is one; else only the city can.
    let verified = match verdict {
        None => named,
        Some(verdict) => verdict == QualifierVerdict::Matches,
    };
    let verification = match (verified, verdict) {
        (true, _) => "verified",
        (false, None) => "unconfirmed",
        (false, Some(_)) => "qualifier_mismatch",
    };
    ToolOutput::ok(render_report(&parsed, &place, location, verified)).with_meta(json!({
        "outcome": "report",
        "resolved": place.describe(),
        "verification": verification,
    }))
}

/// Whether a recorded answer reads as the service's: any status but 200, a not-found message,
/// or a `j1` JSON object. Anything else would reach the model as "No such place" or "could not
/// be reached", hiding a broken fixture.
pub fn check_recorded(status: u16, body: &str) -> Result<(), String> {
    if status != 200 || says_not_found(body) {
        return Ok(());
    }
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(body) else {
        return Err("status 200, but the body is not a JSON object (wttr.in's j1 answer)".into());
    };
    const J1_KEYS: [&str; 3] = ["current_condition", "nearest_area", "weather"];
    if !J1_KEYS.iter().any(|k| object.contains_key(*k)) {
        return Err(format!(
            "status 200, but the body has none of wttr.in's j1 fields ({})",
            J1_KEYS.join(", ")
        ));
    }
    Ok(())
}

/// wttr.in says "location not found" for a place it cannot find; before that it said "Unknown
/// location; please try ~…", which is what the hand-made fixtures hold, so both are read as
/// not found.
fn says_not_found(body: &str) -> bool {
    static PATTERN: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    PATTERN
        .get_or_init(|| {
            Regex::new(r"(?i)location not found|unknown location").expect("static pattern compiles")
        })
        .is_match(body)
}

fn no_such_place(location: &str) -> ToolOutput {
    ToolOutput::ok(format!(
        "No such place: \"{location}\". {SERVICE_HOST} does not know it."
    ))
    .with_meta(json!({"outcome": "not_found"}))
}

fn unavailable(reason: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "The weather service could not be reached: {reason}."
    ))
    .with_meta(json!({"outcome": "unavailable"}))
}
