//! How many samples a category needs before a verdict is possible at all. The sign-flip test's
//! smallest two-sided p over n samples is 2/2^n (every sample moved the same way), and a row's
//! adjusted p is never below its raw p, so a category whose 2/2^n is not below the level its
//! comparison is tested at can never be called, whatever the model does.

use super::ALPHA;

/// The smallest n with 2/2^n below `level`.
pub fn smallest_callable_n(level: f64) -> usize {
    (1..64)
        .find(|&n| 2.0 / 2f64.powi(n as i32) < level)
        .unwrap_or(64)
}

/// Each category's number of samples, in the order the categories first appear.
pub fn category_sizes<'a>(categories: impl IntoIterator<Item = &'a str>) -> Vec<(String, usize)> {
    let mut sizes: Vec<(String, usize)> = Vec::new();
    for c in categories {
        match sizes.iter_mut().find(|(name, _)| name == c) {
            Some((_, n)) => *n += 1,
            None => sizes.push((c.to_string(), 1)),
        }
    }
    sizes
}

/// One warning line per category of fewer samples than a verdict needs, for a wording report
/// over these categories (name, samples), `laws` laws and `variants` variants. Below the first
/// bound no verdict is possible at all (each variant is tested at 5% over the variants); below
/// the second, Bonferroni over every row of the comparison (each category on two outcomes, the
/// total on two, each law) is the worst case the family's step-down test can face.
pub fn small_category_warnings(
    categories: &[(String, usize)],
    laws: usize,
    variants: usize,
) -> Vec<String> {
    let variants = variants.max(1);
    let level = ALPHA / variants as f64;
    let rows = 2 * categories.len() + 2 + laws;
    let never = smallest_callable_n(level);
    let sure = smallest_callable_n(level / rows as f64);
    categories
        .iter()
        .filter(|(_, n)| *n < sure)
        .map(|(name, n)| {
            let with = format!(
                "with {} categor{}, {laws} law{} and {variants} variant{}",
                categories.len(),
                if categories.len() == 1 { "y" } else { "ies" },
                if laws == 1 { "" } else { "s" },
                if variants == 1 { "" } else { "s" }
            );
            if *n < never {
                format!("warning: category `{name}` has {n} samples: {with} it can never reach a verdict; it needs at least {never}, and {sure} to have room under all {rows} rows of the report")
            } else {
                format!("warning: category `{name}` has {n} samples: {with} it can reach a verdict only when the rows move together; {sure} samples give room under all {rows} rows of the report")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand computation: 2/2^5 = .0625 ≥ .05 but 2/2^6 = .03125 < .05; at .025 (two variants)
    /// 2/2^6 ≥ .025 and 2/2^7 = .0156 < .025; at .05/21 = .00238, 2/2^9 = .0039 ≥ it and
    /// 2/2^10 = .00195 < it.
    #[test]
    fn the_bounds_are_the_powers_of_two_worked_by_hand() {
        assert_eq!(smallest_callable_n(0.05), 6);
        assert_eq!(smallest_callable_n(0.025), 7);
        assert_eq!(smallest_callable_n(0.05 / 21.0), 10);
    }

    #[test]
    fn a_category_of_five_can_never_be_called_and_one_of_ten_is_not_warned() {
        // Four categories and 11 laws: 2·4 + 2 + 11 = 21 rows.
        let cats: Vec<(String, usize)> = [("a", 5), ("b", 6), ("c", 10), ("d", 30)]
            .iter()
            .map(|(n, k)| (n.to_string(), *k))
            .collect();
        let warnings = small_category_warnings(&cats, 11, 1);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("`a` has 5 samples")
                && warnings[0].contains("can never reach a verdict; it needs at least 6, and 10")
        );
        assert!(
            warnings[1].contains("`b` has 6 samples")
                && warnings[1].contains("only when the rows move together")
        );
    }
}
