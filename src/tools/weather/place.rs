//! Where the service says a lookup landed, and whether that agrees with what was asked.
//!
//! Only the qualifier ("Texas" in "Paris, Texas") is verified. The geocoder answers with the
//! nearest populated area, which for a big city is often a neighbourhood with another name, so a
//! city check would reject good answers; region and country are what a wrong answer gets wrong.

use serde_json::Value;

/// `nearest_area[0]` of a `j1` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPlace {
    pub area: String,
    pub region: String,
    pub country: String,
}

impl ResolvedPlace {
    /// None when the body names no area at all, which wttr.in does for places it cannot find.
    pub fn from_j1(body: &Value) -> Option<ResolvedPlace> {
        let nearest = body.get("nearest_area")?.get(0)?;
        let place = ResolvedPlace {
            area: first_value(nearest.get("areaName")),
            region: first_value(nearest.get("region")),
            country: first_value(nearest.get("country")),
        };
        let names_something =
            !(place.area.is_empty() && place.region.is_empty() && place.country.is_empty());
        names_something.then_some(place)
    }

    /// "Area, Region, Country", skipping empty and repeated parts ("Singapore" once, not thrice).
    pub fn describe(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        for part in [&self.area, &self.region, &self.country] {
            let fresh = !parts.iter().any(|seen| fold(seen) == fold(part));
            if !part.is_empty() && fresh {
                parts.push(part);
            }
        }
        parts.join(", ")
    }

    /// Region and country, for saying where a contradicting answer actually is.
    pub fn region_and_country(&self) -> String {
        ResolvedPlace {
            area: String::new(),
            region: self.region.clone(),
            country: self.country.clone(),
        }
        .describe()
    }
}

/// `[{"value": "Texas"}]` → "Texas".
pub fn first_value(values: Option<&Value>) -> String {
    values
        .and_then(|list| list.get(0))
        .and_then(|entry| entry.get("value"))
        .and_then(Value::as_str)
        .map(|text| text.trim().to_string())
        .unwrap_or_default()
}

/// The part before the first comma: "Paris" in "Paris, Texas".
pub fn city_of(location: &str) -> &str {
    location.split(',').next().unwrap_or(location).trim()
}

/// The part after the last comma, when there is one: "Bahamas" in "Nassau, Bahamas".
pub fn qualifier_of(location: &str) -> Option<&str> {
    let (_, qualifier) = location.rsplit_once(',')?;
    let qualifier = qualifier.trim();
    (!qualifier.is_empty()).then_some(qualifier)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QualifierVerdict {
    Matches,
    Contradicts,
}

/// Whether the resolved region or country is the state or country the qualifier names.
pub fn check_qualifier(qualifier: &str, place: &ResolvedPlace) -> QualifierVerdict {
    let wanted = fold(qualifier);
    let region_parts: Vec<String> = place.region.split(',').map(fold).collect();
    let country = fold(&place.country);
    let is_resolved_name = |name: &str| name == country || region_parts.iter().any(|r| r == name);

    let groups: Vec<&[&str]> = ALIAS_GROUPS
        .iter()
        .copied()
        .filter(|group| group.iter().any(|alias| fold(alias) == wanted))
        .collect();
    let matched = if groups.is_empty() {
        // A qualifier the table does not know: a plain containment test is the best guess.
        let contains = |field: &str| !wanted.is_empty() && fold(field).contains(&wanted);
        contains(&place.region) || contains(&place.country)
    } else {
        groups
            .iter()
            .flat_map(|group| group.iter())
            .any(|alias| is_resolved_name(&fold(alias)))
    };
    if matched {
        QualifierVerdict::Matches
    } else {
        QualifierVerdict::Contradicts
    }
}

/// Whether the asked city names the resolved area or region ("London" → "City of London, Greater
/// London"), or the area is part of the asked name ("New York City" → "New York").
pub fn city_matches(location: &str, place: &ResolvedPlace) -> bool {
    let city = fold(city_of(location));
    if city.is_empty() {
        return false;
    }
    let area = fold(&place.area);
    let region = fold(&place.region);
    area.contains(&city) || region.contains(&city) || (!area.is_empty() && city.contains(&area))
}

/// Lowercase, accents dropped, punctuation to spaces, spaces collapsed: "Lomé" and "lome",
/// "U.S.A." and "usa", "Côte d'Ivoire" and "cote d ivoire" compare equal.
pub fn fold(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for ch in text.chars() {
        let base = strip_accent(ch);
        if base.is_alphanumeric() {
            folded.extend(base.to_lowercase());
        } else if base == '.' {
            // "U.S." is "US", not "U S".
        } else {
            folded.push(' ');
        }
    }
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn strip_accent(ch: char) -> char {
    match ch {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' => 'a',
        'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' | 'Ā' => 'A',
        'ç' | 'ć' | 'č' => 'c',
        'Ç' | 'Ć' | 'Č' => 'C',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ě' => 'e',
        'È' | 'É' | 'Ê' | 'Ë' | 'Ē' | 'Ě' => 'E',
        'ì' | 'í' | 'î' | 'ï' | 'ī' => 'i',
        'Ì' | 'Í' | 'Î' | 'Ï' | 'Ī' => 'I',
        'ñ' | 'ń' | 'ň' => 'n',
        'Ñ' | 'Ń' | 'Ň' => 'N',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' => 'o',
        'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' | 'Ō' => 'O',
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' => 'u',
        'Ù' | 'Ú' | 'Û' | 'Ü' | 'Ū' | 'Ů' => 'U',
        'ý' | 'ÿ' => 'y',
        'Ý' => 'Y',
        'ß' => 's',
        'ł' => 'l',
        'Ł' => 'L',
        'š' => 's',
        'Š' => 'S',
        'ž' | 'ź' | 'ż' => 'z',
        'Ž' | 'Ź' | 'Ż' => 'Z',
        'ř' => 'r',
        'Ř' => 'R',
        _ => ch,
    }
}

/// Each group is one state, province or country: the names users write for it, and the names
/// wttr.in reports as `region` or `country`. A qualifier matches when the resolved region or
/// country is any name in a group that contains the qualifier. Names not in here fall back to a
/// containment test, so a missing entry costs precision, not correctness.
pub const ALIAS_GROUPS: &[&[&str]] = &[
    // United States: full name and postal code.
    &["Alabama", "AL"],
    &["Alaska", "AK"],
    &["Arizona", "AZ"],
    &["Arkansas", "AR"],
    &["California", "CA", "Calif"],
    &["Colorado", "CO"],
    &["Connecticut", "CT"],
    &["Delaware", "DE"],
    &["Florida", "FL", "Fla"],
    &["Georgia", "GA"],
    &["Hawaii", "HI"],
    &["Idaho", "ID"],
    &["Illinois", "IL"],
    &["Indiana", "IN"],
    &["Iowa", "IA"],
    &["Kansas", "KS"],
    &["Kentucky", "KY"],
    &["Louisiana", "LA"],
    &["Maine", "ME"],
    &["Maryland", "MD"],
    &["Massachusetts", "MA", "Mass"],
    &["Michigan", "MI"],
    &["Minnesota", "MN"],
    &["Mississippi", "MS"],
    &["Missouri", "MO"],
    &["Montana", "MT"],
    &["Nebraska", "NE"],
    &["Nevada", "NV"],
    &["New Hampshire", "NH"],
    &["New Jersey", "NJ"],
    &["New Mexico", "NM"],
    &["New York", "NY"],
    &["North Carolina", "NC"],
    &["North Dakota", "ND"],
    &["Ohio", "OH"],
    &["Oklahoma", "OK"],
    &["Oregon", "OR"],
    &["Pennsylvania", "PA"],
    &["Rhode Island", "RI"],
    &["South Carolina", "SC"],
    &["South Dakota", "SD"],
    &["Tennessee", "TN"],
    &["Texas", "TX"],
    &["Utah", "UT"],
    &["Vermont", "VT"],
    &["Virginia", "VA"],
    &["Washington", "WA", "Washington State"],
    &["West Virginia", "WV"],
    &["Wisconsin", "WI"],
    &["Wyoming", "WY"],
    &["District of Columbia", "DC", "Washington DC"],
    &["Puerto Rico", "PR"],
    // Canadian provinces and Australian states, which users write the same way.
    &["Ontario", "ON", "Ont"],
    &["Quebec", "QC"],
    &["British Columbia", "BC"],
    &["Alberta", "AB"],
    &["Manitoba", "MB"],
    &["Saskatchewan", "SK"],
    &["Nova Scotia", "NS"],
    &["New Brunswick", "NB"],
    &["Newfoundland and Labrador", "Newfoundland", "NL"],
    &["Prince Edward Island", "PEI"],
    &["New South Wales", "NSW"],
    &["Victoria", "VIC"],
    &["Queensland", "QLD"],
    &["Western Australia", "WA"],
    &["South Australia", "SA"],
    &["Tasmania", "TAS"],
    &["Northern Territory", "NT"],
    &["Australian Capital Territory", "ACT"],
    // Countries: wttr.in's spelling first, then what people type.
    &[
        "United States of America",
        "United States",
        "USA",
        "US",
        "America",
        "U.S.A.",
        "U.S.",
    ],
    &[
        "United Kingdom",
        "UK",
        "U.K.",
        "Great Britain",
        "Britain",
        "GB",
        "England",
        "Scotland",
        "Wales",
        "Northern Ireland",
    ],
    &["United Arab Emirates", "UAE", "Emirates"],
    &["Bahamas", "The Bahamas"],
    &["Netherlands", "The Netherlands", "Holland", "NL"],
    &["Czech Republic", "Czechia"],
    &["South Korea", "Korea", "Republic of Korea", "Korea, South"],
    &["North Korea", "DPRK"],
    &["Russia", "Russian Federation"],
    &["Ivory Coast", "Cote d'Ivoire"],
    &["Myanmar", "Burma"],
    &["Eswatini", "Swaziland"],
    &["Turkey", "Turkiye"],
    &["Vietnam", "Viet Nam"],
    &["Laos", "Lao People's Democratic Republic"],
    &["Iran", "Islamic Republic of Iran"],
    &["Syria", "Syrian Arab Republic"],
    &[
        "Democratic Republic of the Congo",
        "DRC",
        "DR Congo",
        "Congo-Kinshasa",
    ],
    &["Congo", "Republic of the Congo", "Congo-Brazzaville"],
    &["Taiwan", "Republic of China"],
    &["China", "PRC", "People's Republic of China"],
    &["Bosnia and Herzegovina", "Bosnia"],
    &["Trinidad and Tobago", "Trinidad"],
    &["Saint Lucia", "St Lucia"],
    &["New Zealand", "NZ", "Aotearoa"],
    &["Philippines", "The Philippines"],
    &["Gambia", "The Gambia"],
    &["Vatican", "Vatican City", "Holy See"],
    &["North Macedonia", "Macedonia"],
    &["Cape Verde", "Cabo Verde"],
    &["Timor-Leste", "East Timor"],
    &["Palestine", "Palestinian Territories"],
    &["Australia", "AU", "Oz"],
    &["Canada", "CAN"],
    &["Germany", "Deutschland", "DE"],
    &["France", "FR"],
    &["Spain", "Espana", "ES"],
    &["Italy", "Italia", "IT"],
    &["Japan", "JP", "Nippon"],
    &["Mexico", "MX"],
    &["Brazil", "Brasil", "BR"],
    &["Switzerland", "Schweiz", "Suisse", "CH"],
    &["Austria", "Osterreich"],
    &["Greece", "Hellas"],
    &["India", "Bharat"],
    &["Ireland", "Eire", "Republic of Ireland"],
    &["Saudi Arabia", "KSA"],
    &["South Africa", "RSA", "ZA"],
];

/// Whether the alias table has an entry for this qualifier (otherwise containment decides).
pub fn known_qualifier(qualifier: &str) -> bool {
    let wanted = fold(qualifier);
    ALIAS_GROUPS
        .iter()
        .any(|group| group.iter().any(|alias| fold(alias) == wanted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(area: &str, region: &str, country: &str) -> ResolvedPlace {
        ResolvedPlace {
            area: area.into(),
            region: region.into(),
            country: country.into(),
        }
    }

    #[test]
    fn fold_drops_accents_case_and_dots() {
        assert_eq!(fold("Lomé"), "lome");
        assert_eq!(fold(" U.S.A. "), "usa");
        assert_eq!(fold("Côte d'Ivoire"), "cote d ivoire");
    }

    #[test]
    fn two_letter_state_codes_match_the_region() {
        let paris_tx = place("Paris", "Texas", "United States of America");
        assert_eq!(check_qualifier("TX", &paris_tx), QualifierVerdict::Matches);
        assert_eq!(check_qualifier("tx", &paris_tx), QualifierVerdict::Matches);
        assert_eq!(check_qualifier("USA", &paris_tx), QualifierVerdict::Matches);
        assert_eq!(
            check_qualifier("France", &paris_tx),
            QualifierVerdict::Contradicts
        );
    }

    #[test]
    fn an_ambiguous_code_accepts_either_of_its_meanings() {
        let perth = place("Perth", "Western Australia", "Australia");
        let seattle = place("Seattle", "Washington", "United States of America");
        assert_eq!(check_qualifier("WA", &perth), QualifierVerdict::Matches);
        assert_eq!(check_qualifier("WA", &seattle), QualifierVerdict::Matches);
    }

    #[test]
    fn describe_skips_repeated_parts() {
        let singapore = place("Singapore", "", "Singapore");
        assert_eq!(singapore.describe(), "Singapore");
    }
}
