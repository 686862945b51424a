//! The `skilleval` binary: parses the command line and runs the command it names (`cli`).

use std::process::ExitCode;

use clap::Parser;
use skilleval::cli::{run_command, Cli};

/// SIGPIPE stays ignored (Rust's default), so that writing to a child that has exited is an
/// error of that write (`src/base/child.rs`), never the silent death of the whole process.
/// skilleval prints through `base::stdout`, which drops what a closed stdout cannot take; a
/// `println!` elsewhere would panic there, and this hook ends the process quietly instead, with
/// the status a shell gives a process SIGPIPE ended.
fn end_quietly_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            extern "C" {
                fn _exit(status: i32) -> !;
            }
            // SAFETY: ends the process at once; nothing is left to write to a closed stdout.
            unsafe { _exit(141) }
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    end_quietly_on_closed_stdout();
    let cli = Cli::parse();
    let result = run_command(cli.command);
    // Output the command could not write is lost: an error whatever the command's own status.
    if let (Ok(_), Some(why)) = (&result, skilleval::base::stdout::lost_output()) {
        eprintln!("error: stdout: cannot write: {why}; the command's work is done, but its output is lost");
        return ExitCode::from(1);
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // One line: the chain of causes joined, no backtrace.
            let message = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}
