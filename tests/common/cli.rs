//! The `skilleval` binary, run as a user runs it from the checkout.

use std::process::{Command, Output};

/// `skilleval ARGS` in the checkout, waited for.
pub fn skilleval(args: &[&str]) -> Output {
    command().args(args).output().expect("the binary runs")
}

/// The binary as a command to add arguments and environment to, in the checkout.
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skilleval"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// The exit code (-1 when a signal ended it), stdout and stderr of a finished run.
pub fn outcome(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Output bytes as text, any invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `skilleval ARGS` run from `cwd`, with a model cache of its own under it, so that another
/// folder's shipped packs never stand in for the ones this run writes out.
pub fn skilleval_in(cwd: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(args)
        .current_dir(cwd)
        .env("SKILLEVAL_CACHE_DIR", cwd.join("cache"))
        .output()
        .expect("the binary runs")
}

/// Stdout then stderr, as one text.
pub fn both(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}
