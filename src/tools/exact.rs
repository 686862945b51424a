//! Exact decimal arithmetic for the computed tools: a number the model passes is read as the
//! decimal it spells, worked on as a fraction, and written back exactly when it has at most six
//! decimals, else rounded to four and marked as approximate.

use serde_json::Value;

/// A fraction in lowest terms, its denominator positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

impl Ratio {
    /// `num / den`; `None` for a zero denominator.
    pub fn new(num: i128, den: i128) -> Option<Ratio> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        let sign = if den < 0 { -1 } else { 1 };
        Some(Ratio {
            num: sign * num / g,
            den: sign * den / g,
        })
    }

    pub fn int(n: i128) -> Ratio {
        Ratio { num: n, den: 1 }
    }

    /// The decimal a string spells: `-12.50`, `3`, `1e3`, `2.5E-2`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Ratio> {
        let text = text.trim();
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(at) => (&text[..at], text[at + 1..].parse::<i32>().ok()?),
            None => (text, 0),
        };
        let (negative, digits) = match mantissa.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        if whole.is_empty() && fraction.is_empty()
            || !whole
                .chars()
                .chain(fraction.chars())
                .all(|c| c.is_ascii_digit())
        {
            return None;
        }
        let all: String = format!("{whole}{fraction}");
        let mut num: i128 = all.parse().ok()?;
        if negative {
            num = -num;
        }
        let scale = exponent - fraction.len() as i32;
        let power = 10i128.checked_pow(scale.unsigned_abs())?;
        if scale >= 0 {
            Ratio::new(num.checked_mul(power)?, 1)
        } else {
            Ratio::new(num, power)
        }
    }

    /// A JSON number (or a string holding one) as the decimal it spells.
    pub fn from_json(value: &Value) -> Option<Ratio> {
        match value {
            Value::Number(n) => Ratio::parse(&n.to_string()),
            Value::String(s) => Ratio::parse(s),
            _ => None,
        }
    }

    pub fn add(self, o: Ratio) -> Option<Ratio> {
        let num = self
            .num
            .checked_mul(o.den)?
            .checked_add(o.num.checked_mul(self.den)?)?;
        Ratio::new(num, self.den.checked_mul(o.den)?)
    }

    pub fn sub(self, o: Ratio) -> Option<Ratio> {
        self.add(Ratio {
            num: -o.num,
            den: o.den,
        })
    }

    pub fn mul(self, o: Ratio) -> Option<Ratio> {
        // Cross-reduce first so that products of exact unit factors stay in range.
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        Ratio::new(
            (self.num / g1).checked_mul(o.num / g2)?,
            (self.den / g2).checked_mul(o.den / g1)?,
        )
    }

    /// `None` when `o` is zero.
    pub fn div(self, o: Ratio) -> Option<Ratio> {
        self.mul(Ratio::new(o.den, o.num)?)
    }

    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    /// Written out: exactly when it has at most six decimals (`true`), else rounded to four.
    pub fn show(self) -> (String, bool) {
        let million = 1_000_000i128;
        if million % self.den == 0 {
            return (decimal(self.num * (million / self.den), 6), true);
        }
        // Four decimals, to nearest. No tie can reach here: a value halfway between two
        // four-decimal ones has five decimals, and is written exactly above.
        let scaled = self.num * 10_000;
        let (q, r) = (scaled.div_euclid(self.den), scaled.rem_euclid(self.den));
        let rounded = if 2 * r > self.den { q + 1 } else { q };
        (decimal(rounded, 4), false)
    }

    /// Written out exactly, with no trailing zeros; `None` past 18 decimals.
    pub fn exact_text(self) -> Option<String> {
        for places in 0..=18u32 {
            let power = 10i128.pow(places);
            if power % self.den == 0 {
                return Some(decimal(self.num * (power / self.den), places));
            }
        }
        None
    }
}

/// `units / 10^places` as a decimal with no trailing zeros and no `-0`.
fn decimal(units: i128, places: u32) -> String {
    let power = 10i128.pow(places);
    let (whole, fraction) = (units.abs() / power, units.abs() % power);
    let sign = if units < 0 { "-" } else { "" };
    let mut text = format!("{sign}{whole}");
    if fraction > 0 {
        let digits = format!("{fraction:0width$}", width = places as usize);
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_read_and_write_back_as_spelled() {
        for (text, shown) in [
            ("12.50", "12.5"),
            ("-3", "-3"),
            ("1e3", "1000"),
            ("2.5E-2", "0.025"),
            ("0.000", "0"),
            ("+7", "7"),
        ] {
            assert_eq!(Ratio::parse(text).unwrap().exact_text().unwrap(), shown);
        }
        for bad in ["", ".", "1.2.3", "12 km", "-", "e5", "0x10"] {
            assert_eq!(Ratio::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_result_is_exact_to_six_decimals_else_rounded_to_four() {
        let r = |n, d| Ratio::new(n, d).unwrap();
        assert_eq!(r(1, 8).show(), ("0.125".into(), true));
        assert_eq!(r(-1, 3).show(), ("-0.3333".into(), false));
        assert_eq!(r(2, 3).show(), ("0.6667".into(), false));
        assert_eq!(r(1, 30_000).show(), ("0".into(), false));
        assert_eq!(r(-1, 30_000).show(), ("0".into(), false));
        assert_eq!(r(15, 100_000).show(), ("0.00015".into(), true));
        assert_eq!(r(123_456_789, 7).show(), ("17636684.1429".into(), false));
        assert_eq!(r(1, 7).mul(r(7, 1)).unwrap().show(), ("1".into(), true));
        assert_eq!(r(1, 2).div(r(0, 1)), None);
    }
}
