//! The forest plot of a comparison as inline SVG: one line per row (category or law, and the
//! total), Δ as a dot coloured by its verdict, its 95% interval as a bar, and the row's MDE as a
//! grey band around 0 (a change inside the band is one the run could have missed). The dot and
//! bar are those of the outcome that carried the verdict: the pass rate, or the share of laws
//! held where that alone found the change; a row both made mixed shows the share hollow below.

use super::figures::{delta_and_interval, p_value};
use super::markup::{escape, verdict_class};
use crate::eval::stats::{Interval, Row, Verdict};

const WIDTH: f64 = 720.0;
const LABEL_WIDTH: f64 = 250.0;
const RIGHT_MARGIN: f64 = 20.0;
const ROW_HEIGHT: f64 = 24.0;
const TOP: f64 = 8.0;
const AXIS_HEIGHT: f64 = 30.0;

/// x of a difference (a fraction from −1 to +1).
fn x_of(delta: f64) -> f64 {
    let plot = WIDTH - LABEL_WIDTH - RIGHT_MARGIN;
    LABEL_WIDTH + (delta.clamp(-1.0, 1.0) + 1.0) / 2.0 * plot
}

/// The plot of `rows`; `kind` (`category` or `law`) goes into each mark's `data-kind`, and the
/// total, when given, is drawn last under a rule with `data-kind="total"`.
pub fn svg(caption: &str, kind: &str, rows: &[&Row], total: Option<&Row>) -> String {
    let count = rows.len() + usize::from(total.is_some());
    let height = TOP + count as f64 * ROW_HEIGHT + AXIS_HEIGHT;
    let mut out = format!(
        "<svg class=\"forest\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">\n",
        escape(caption)
    );
    out.push_str(&format!("<title>{}</title>\n", escape(caption)));
    let bottom = TOP + count as f64 * ROW_HEIGHT;
    // Grid: −100, −50, 0, +50, +100 pp.
    for tick in [-1.0, -0.5, 0.0, 0.5, 1.0] {
        let x = x_of(tick);
        let class = if tick == 0.0 { "zero" } else { "grid" };
        out.push_str(&format!(
            "<line class=\"{class}\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/>\n<text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:+.0}</text>\n",
            bottom + 14.0,
            tick * 100.0
        ));
    }
    out.push_str(&format!(
        "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">Δ pp (treatment − reference), 95% interval; grey: ± MDE</text>\n",
        x_of(0.0),
        bottom + 27.0
    ));
    let all = rows
        .iter()
        .map(|r| (*r, kind))
        .chain(total.map(|t| (t, "total")));
    for (index, (row, row_kind)) in all.enumerate() {
        let y = TOP + index as f64 * ROW_HEIGHT + ROW_HEIGHT / 2.0;
        out.push_str(&row_marks(row, row_kind, y));
    }
    out.push_str("</svg>\n");
    out
}

/// What a row's dot and bar show: Δ, its interval, and whether it is the share of laws held.
struct Drawn {
    delta: Option<f64>,
    interval: Option<Interval>,
    laws_held: bool,
}

/// The outcome that carried the row's verdict: the share of laws held when it found a change
/// the pass rate did not (the "(laws held)" of the verdict), else the pass rate.
fn drawn(row: &Row) -> Drawn {
    match &row.held {
        Some(held)
            if matches!(held.verdict, Verdict::Better | Verdict::Worse)
                && held.verdict == row.verdict
                && row.pass_verdict().is_none() =>
        {
            Drawn {
                delta: Some(held.delta),
                interval: held.interval,
                laws_held: true,
            }
        }
        _ => Drawn {
            delta: row.delta,
            interval: row.interval,
            laws_held: false,
        },
    }
}

fn row_marks(row: &Row, kind: &str, y: f64) -> String {
    let shown = drawn(row);
    let verdict = verdict_class(row);
    let mut out = format!(
        "<g class=\"row {verdict}\" data-kind=\"{kind}\" data-name=\"{}\">\n",
        escape(&row.name)
    );
    if kind == "total" {
        out.push_str(&format!(
            "<line class=\"rule\" x1=\"0\" y1=\"{:.1}\" x2=\"{WIDTH}\" y2=\"{:.1}\"/>\n",
            y - ROW_HEIGHT / 2.0,
            y - ROW_HEIGHT / 2.0
        ));
    }
    out.push_str(&format!(
        "<text class=\"label{}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}{} (n={})</text>\n",
        if kind == "total" { " total" } else { "" },
        LABEL_WIDTH - 8.0,
        y + 4.0,
        escape(&row.name),
        if shown.laws_held { " · laws held" } else { "" },
        row.samples
    ));
    // The MDE is the pass rate's: no band under the share of laws held.
    if let (Some(mde), false) = (row.mde, shown.laws_held) {
        let (left, right) = (x_of(-mde), x_of(mde));
        out.push_str(&format!(
            "<rect class=\"mde\" x=\"{left:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>MDE {:.0} pp</title></rect>\n",
            y - ROW_HEIGHT * 0.35,
            right - left,
            ROW_HEIGHT * 0.7,
            (mde * 100.0).ceil()
        ));
    }
    match (shown.delta, shown.interval) {
        (Some(delta), Some(interval)) => {
            out.push_str(&format!(
                "<line class=\"ci\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\n",
                x_of(interval.low),
                x_of(interval.high)
            ));
            let title = match (&row.held, shown.laws_held) {
                (Some(held), true) => format!(
                    "{}: laws held Δ {:+.1} pp [{:+.1}, {:+.1}], p adj. {}; pass rate Δ {} pp, p adj. {}; {}",
                    row.name,
                    delta * 100.0,
                    interval.low * 100.0,
                    interval.high * 100.0,
                    p_value(held.p_adjusted),
                    delta_and_interval(row, 1),
                    p_value(row.p_adjusted),
                    row.verdict_label()
                ),
                _ => format!(
                    "{}: Δ {} pp, p {} (adj. {}), MDE {}, {}",
                    row.name,
                    delta_and_interval(row, 1),
                    p_value(row.p_value),
                    p_value(row.p_adjusted),
                    row.mde
                        .map_or("—".into(), |m| format!("{:.0} pp", (m * 100.0).ceil())),
                    row.verdict_label()
                ),
            };
            out.push_str(&format!(
                "<circle class=\"mark\" data-kind=\"{kind}\" data-name=\"{}\" data-verdict=\"{verdict}\" data-outcome=\"{}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\"><title>{}</title></circle>\n",
                escape(&row.name),
                if shown.laws_held { "laws_held" } else { "pass_rate" },
                x_of(delta),
                escape(&title)
            ));
        }
        _ => out.push_str(&format!(
            "<text class=\"nodata\" x=\"{:.1}\" y=\"{:.1}\">no data</text>\n",
            x_of(0.0) + 8.0,
            y + 4.0
        )),
    }
    out.push_str(&opposing_held_marks(row, &shown, y));
    out.push_str("</g>\n");
    out
}

/// A row made mixed by its pass rate and its share of laws held moving apart: the share's Δ
/// and interval, drawn hollow just below the pass rate's, since both carried the verdict.
fn opposing_held_marks(row: &Row, shown: &Drawn, y: f64) -> String {
    let Some(held) = &row.held else {
        return String::new();
    };
    let opposed = row.verdict == Verdict::Mixed
        && !shown.laws_held
        && matches!(held.verdict, Verdict::Better | Verdict::Worse)
        && row.pass_verdict().is_some_and(|v| v != held.verdict);
    let (true, Some(interval)) = (opposed, held.interval) else {
        return String::new();
    };
    let y = y + ROW_HEIGHT * 0.25;
    let title = format!(
        "{}: laws held Δ {:+.1} pp [{:+.1}, {:+.1}], p adj. {}; with the pass rate, mixed",
        row.name,
        held.delta * 100.0,
        interval.low * 100.0,
        interval.high * 100.0,
        p_value(held.p_adjusted)
    );
    format!(
        "<line class=\"ci held\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\n<circle class=\"held-mark\" data-name=\"{}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\"><title>{}</title></circle>\n",
        x_of(interval.low),
        x_of(interval.high),
        escape(&row.name),
        x_of(held.delta),
        escape(&title)
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_outcomes::known_summary;
    use super::*;
    use crate::eval::stats::{HeldShare, Interval, Verdict};

    /// A row whose pass rate moved inside its noise while its share of laws held rose.
    fn carried_by_laws_held() -> Row {
        let mut row = known_summary().wording.categories[0].clone();
        row.delta = Some(0.05);
        row.interval = Some(Interval {
            low: -0.10,
            high: 0.20,
        });
        row.p_adjusted = 0.5;
        row.held = Some(HeldShare {
            reference: 0.5,
            treatment: 0.8,
            delta: 0.30,
            interval: Some(Interval {
                low: 0.20,
                high: 0.40,
            }),
            p_value: 0.001,
            p_adjusted: 0.002,
            verdict: Verdict::Better,
            conditional_power: None,
        });
        row.verdict = Verdict::Better;
        row
    }

    fn attribute(svg: &str, element: &str, name: &str) -> f64 {
        let start = svg
            .find(&format!("<{element} "))
            .expect("the element is drawn");
        let tail = &svg[start..];
        let value = tail
            .split(&format!(" {name}=\""))
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the attribute is set");
        value.parse().expect("a number")
    }

    #[test]
    fn a_verdict_carried_by_laws_held_is_drawn_on_the_laws_held_interval() {
        let row = carried_by_laws_held();
        assert_eq!(row.verdict_label(), "better (laws held)");
        let plot = svg("plot", "category", &[&row], None);
        let mark = format!("{:.1}", attribute(&plot, "circle", "cx"));
        assert_eq!(mark, format!("{:.1}", x_of(0.30)), "{plot}");
        let (low, high) = (
            attribute(&plot, "line class=\"ci\"", "x1"),
            attribute(&plot, "line class=\"ci\"", "x2"),
        );
        assert_eq!(
            (format!("{low:.1}"), format!("{high:.1}")),
            (format!("{:.1}", x_of(0.20)), format!("{:.1}", x_of(0.40))),
            "{plot}"
        );
        assert!(plot.contains("laws held"), "{plot}");
    }

    #[test]
    fn a_verdict_carried_by_the_pass_rate_is_drawn_on_the_pass_rate_interval() {
        let mut row = carried_by_laws_held();
        row.held = None;
        row.interval = Some(Interval {
            low: 0.02,
            high: 0.08,
        });
        row.p_adjusted = 0.001;
        let plot = svg("plot", "category", &[&row], None);
        let mark = format!("{:.1}", attribute(&plot, "circle", "cx"));
        assert_eq!(mark, format!("{:.1}", x_of(0.05)), "{plot}");
    }

    #[test]
    fn a_mixed_row_draws_the_laws_held_change_beside_the_pass_rate() {
        let mut row = carried_by_laws_held();
        row.interval = Some(Interval {
            low: 0.02,
            high: 0.08,
        });
        row.p_adjusted = 0.001;
        if let Some(held) = row.held.as_mut() {
            held.delta = -0.30;
            held.interval = Some(Interval {
                low: -0.40,
                high: -0.20,
            });
            held.verdict = Verdict::Worse;
        }
        row.verdict = Verdict::Mixed;
        let plot = svg("plot", "category", &[&row], None);
        let mark = format!("{:.1}", attribute(&plot, "circle class=\"mark\"", "cx"));
        assert_eq!(mark, format!("{:.1}", x_of(0.05)), "{plot}");
        let held = format!(
            "{:.1}",
            attribute(&plot, "circle class=\"held-mark\"", "cx")
        );
        assert_eq!(held, format!("{:.1}", x_of(-0.30)), "{plot}");
        assert_eq!(plot.matches("<circle class=\"mark\"").count(), 1, "{plot}");
    }
}
