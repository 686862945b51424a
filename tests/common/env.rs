//! Knobs the tests read from the environment, such as the size of a simulation.

/// The number in the environment variable `name`, or `default` when it is unset or not a
/// number.
pub fn count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
