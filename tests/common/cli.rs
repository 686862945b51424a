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
