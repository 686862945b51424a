//! `convert_units`: a quantity from one unit to another, computed exactly from the units'
//! definitions (US customary for cups, spoons and gallons), so that every call has its true
//! answer and none is a gap.

use serde_json::{json, Map, Value};

use super::exact::Ratio;
use crate::harness::tools::ToolOutput;

pub const TOOL_NAME: &str = "convert_units";

pub const DESCRIPTION: &str =
    "Converts a quantity from one unit of measurement to another and returns the exact result.";

pub fn parameters_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The quantity to convert, a number: 5"},
            "from_unit": {"type": "string", "description": "The unit the quantity is in: miles, kg, celsius"},
            "to_unit": {"type": "string", "description": "The unit wanted: km, pounds, fahrenheit"},
        },
        "required": ["value", "from_unit", "to_unit"],
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dimension {
    Length,
    Mass,
    Volume,
    Time,
    Speed,
    Temperature,
}

impl Dimension {
    fn name(self) -> &'static str {
        match self {
            Dimension::Length => "length",
            Dimension::Mass => "mass",
            Dimension::Volume => "volume",
            Dimension::Time => "time",
            Dimension::Speed => "speed",
            Dimension::Temperature => "temperature",
        }
    }
}

/// One unit: its dimension, its size in the dimension's base unit (metre, gram, millilitre,
/// second, metre per second) as numerator and denominator, its name, and how users spell it.
struct Unit {
    dimension: Dimension,
    factor: (i128, i128),
    name: &'static str,
    spellings: &'static [&'static str],
}

const fn unit(
    dimension: Dimension,
    factor: (i128, i128),
    name: &'static str,
    spellings: &'static [&'static str],
) -> Unit {
    Unit {
        dimension,
        factor,
        name,
        spellings,
    }
}

use Dimension::*;

/// The exact definitions: the international yard and pound (1959), the US liquid gallon of
/// 231 cubic inches and its cups and spoons.
const UNITS: &[Unit] = &[
    unit(
        Length,
        (1, 1000),
        "millimetres",
        &[
            "mm",
            "millimeter",
            "millimeters",
            "millimetre",
            "millimetres",
        ],
    ),
    unit(
        Length,
        (1, 100),
        "centimetres",
        &[
            "cm",
            "centimeter",
            "centimeters",
            "centimetre",
            "centimetres",
        ],
    ),
    unit(
        Length,
        (1, 1),
        "metres",
        &["m", "meter", "meters", "metre", "metres"],
    ),
    unit(
        Length,
        (1000, 1),
        "kilometres",
        &["km", "kilometer", "kilometers", "kilometre", "kilometres"],
    ),
    unit(Length, (254, 10_000), "inches", &["in", "inch", "inches"]),
    unit(Length, (3048, 10_000), "feet", &["ft", "foot", "feet"]),
    unit(Length, (9144, 10_000), "yards", &["yd", "yard", "yards"]),
    unit(Length, (1_609_344, 1000), "miles", &["mi", "mile", "miles"]),
    unit(Mass, (1, 1), "grams", &["g", "gram", "grams"]),
    unit(
        Mass,
        (1000, 1),
        "kilograms",
        &["kg", "kilogram", "kilograms", "kilo", "kilos"],
    ),
    unit(
        Mass,
        (28_349_523_125, 1_000_000_000),
        "ounces",
        &["oz", "ounce", "ounces"],
    ),
    unit(
        Mass,
        (45_359_237, 100_000),
        "pounds",
        &["lb", "lbs", "pound", "pounds"],
    ),
    unit(
        Volume,
        (1, 1),
        "millilitres",
        &[
            "ml",
            "milliliter",
            "milliliters",
            "millilitre",
            "millilitres",
        ],
    ),
    unit(
        Volume,
        (1000, 1),
        "litres",
        &["l", "liter", "liters", "litre", "litres"],
    ),
    unit(
        Volume,
        (492_892_159_375, 100_000_000_000),
        "US teaspoons",
        &["tsp", "teaspoon", "teaspoons"],
    ),
    unit(
        Volume,
        (1_478_676_478_125, 100_000_000_000),
        "US tablespoons",
        &["tbsp", "tablespoon", "tablespoons"],
    ),
    unit(
        Volume,
        (2_365_882_365, 10_000_000),
        "US cups",
        &["cup", "cups"],
    ),
    unit(
        Volume,
        (3_785_411_784, 1_000_000),
        "US gallons",
        &["gal", "gallon", "gallons", "us gallons"],
    ),
    unit(Time, (1, 1), "seconds", &["s", "sec", "second", "seconds"]),
    unit(
        Time,
        (60, 1),
        "minutes",
        &["min", "mins", "minute", "minutes"],
    ),
    unit(Time, (3600, 1), "hours", &["h", "hr", "hour", "hours"]),
    unit(Time, (86_400, 1), "days", &["day", "days"]),
    unit(Time, (604_800, 1), "weeks", &["week", "weeks"]),
    unit(
        Speed,
        (1_609_344, 3_600_000),
        "miles per hour",
        &["mph", "miles per hour", "mi/h"],
    ),
    unit(
        Speed,
        (1000, 3600),
        "kilometres per hour",
        &[
            "km/h",
            "kph",
            "kmh",
            "kilometers per hour",
            "kilometres per hour",
        ],
    ),
    unit(
        Speed,
        (1, 1),
        "metres per second",
        &["m/s", "meters per second", "metres per second"],
    ),
    unit(
        Temperature,
        (1, 1),
        "degrees Celsius",
        &["c", "celsius", "degrees celsius", "centigrade", "°c"],
    ),
    unit(
        Temperature,
        (1, 1),
        "degrees Fahrenheit",
        &["f", "fahrenheit", "degrees fahrenheit", "°f"],
    ),
];

/// Lower case, anything but letters and digits as a space, spaces collapsed.
fn fold(text: &str) -> String {
    let spaced: String = text
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn find(spelled: &str) -> Option<&'static Unit> {
    let wanted = fold(spelled);
    UNITS
        .iter()
        .find(|u| u.spellings.iter().any(|s| fold(s) == wanted))
}

/// The unit's name for `amount` of it: singular for exactly 1 (`1 foot`, `1 US cup`).
fn name_for(unit: &Unit, amount: &str) -> String {
    if amount != "1" || unit.name.contains(" per ") || unit.name.starts_with("degrees") {
        return unit.name.to_string();
    }
    match unit.name {
        "feet" => "foot".into(),
        "inches" => "inch".into(),
        name => name[..name.len() - 1].to_string(),
    }
}

fn convert(value: Ratio, from: &Unit, to: &Unit) -> Option<Ratio> {
    if from.dimension == Temperature {
        let nine_fifths = Ratio::new(9, 5)?;
        let thirty_two = Ratio::int(32);
        return match (from.name == to.name, from.name.ends_with("Celsius")) {
            (true, _) => Some(value),
            (false, true) => value.mul(nine_fifths)?.add(thirty_two),
            (false, false) => value.sub(thirty_two)?.div(nine_fifths),
        };
    }
    let (a, b) = (
        Ratio::new(from.factor.0, from.factor.1)?,
        Ratio::new(to.factor.0, to.factor.1)?,
    );
    value.mul(a)?.div(b)
}

/// The tool's answer to one call: `3 US gallons ≈ 11.3562 litres`, or an error result saying
/// what is wrong with the arguments.
pub fn answer(args: &Map<String, Value>) -> ToolOutput {
    let Some(value) = args.get("value").and_then(Ratio::from_json) else {
        return ToolOutput::error("value must be a number, e.g. 5.");
    };
    let unit_of = |field: &str| -> Result<&'static Unit, ToolOutput> {
        let spelled = args.get(field).and_then(Value::as_str).unwrap_or("");
        find(spelled).ok_or_else(|| {
            ToolOutput::error(format!(
                "Unknown unit {spelled:?} in {field}. Known units: {}.",
                UNITS
                    .iter()
                    .map(|u| u.spellings[0])
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    };
    let (from, to) = match (unit_of("from_unit"), unit_of("to_unit")) {
        (Ok(from), Ok(to)) => (from, to),
        (Err(out), _) | (_, Err(out)) => return out,
    };
    if from.dimension != to.dimension {
        return ToolOutput::error(format!(
            "Cannot convert {} ({}) to {} ({}).",
            from.name,
            from.dimension.name(),
            to.name,
            to.dimension.name()
        ));
    }
    let (Some(amount), Some(result)) = (value.exact_text(), convert(value, from, to)) else {
        return ToolOutput::error("The number is too large or too precise to convert exactly.");
    };
    let (shown, exact) = result.show();
    let relation = if exact { "=" } else { "≈" };
    ToolOutput::ok(format!(
        "{amount} {} {relation} {shown} {}",
        name_for(from, &amount),
        name_for(to, &shown)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(value: Value, from: &str, to: &str) -> (bool, String) {
        let args = json!({"value": value, "from_unit": from, "to_unit": to});
        let out = answer(args.as_object().unwrap());
        (!out.is_error, out.content)
    }

    // Expected answers from the units' legal definitions and textbook values, not from this code.
    #[test]
    fn conversions_follow_the_units_definitions() {
        let cases = [
            (json!(1), "mile", "km", "1 mile = 1.609344 kilometres"),
            (
                json!(26.2),
                "miles",
                "kilometers",
                "26.2 miles ≈ 42.1648 kilometres",
            ),
            (json!(1), "lb", "kg", "1 pound ≈ 0.4536 kilograms"),
            (
                json!(100),
                "celsius",
                "fahrenheit",
                "100 degrees Celsius = 212 degrees Fahrenheit",
            ),
            (
                json!(-40),
                "F",
                "C",
                "-40 degrees Fahrenheit = -40 degrees Celsius",
            ),
            (
                json!(98.6),
                "°F",
                "°C",
                "98.6 degrees Fahrenheit = 37 degrees Celsius",
            ),
            (
                json!(3),
                "gallons",
                "litres",
                "3 US gallons ≈ 11.3562 litres",
            ),
            (json!(1), "cup", "ml", "1 US cup ≈ 236.5882 millilitres"),
            (json!(3), "tsp", "tbsp", "3 US teaspoons = 1 US tablespoon"),
            (json!(12), "inches", "feet", "12 inches = 1 foot"),
            (json!(2.5), "hours", "minutes", "2.5 hours = 150 minutes"),
            (json!(1), "week", "seconds", "1 week = 604800 seconds"),
            (
                json!(60),
                "mph",
                "km/h",
                "60 miles per hour = 96.56064 kilometres per hour",
            ),
            (
                json!(10),
                "m/s",
                "kph",
                "10 metres per second = 36 kilometres per hour",
            ),
            (json!("16"), "oz", "lb", "16 ounces = 1 pound"),
        ];
        for (value, from, to, expected) in cases {
            assert_eq!(
                said(value, from, to),
                (true, expected.to_string()),
                "{from} → {to}"
            );
        }
    }

    #[test]
    fn wrong_arguments_are_errors_that_say_what_is_wrong() {
        let (ok, text) = said(json!(5), "miles", "kg");
        assert!(
            !ok && text.contains("length") && text.contains("mass"),
            "{text}"
        );
        let (ok, text) = said(json!(5), "parsecs", "km");
        assert!(
            !ok && text.contains("\"parsecs\"") && text.contains("from_unit"),
            "{text}"
        );
        let (ok, text) = said(json!("five"), "miles", "km");
        assert!(!ok && text.contains("value"), "{text}");
    }
}
