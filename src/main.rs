use std::process::ExitCode;

use clap::Parser;
use skilleval::cli::{run_command, Cli};

/// Rust ignores SIGPIPE, so writing to a closed pipe (`skilleval generate … | head -1`) would
/// panic; the default action ends the process quietly, as other command-line tools do.
#[cfg(unix)]
fn end_quietly_on_closed_pipe() {
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    // SAFETY: sets the disposition of one signal before any thread starts.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

fn main() -> ExitCode {
    #[cfg(unix)]
    end_quietly_on_closed_pipe();
    let cli = Cli::parse();
    match run_command(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // One line: the chain of causes joined, no backtrace.
            let message = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}
