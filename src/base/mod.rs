//! What every layer shares about the operating system, each rule in one place: how an input
//! file is opened (`input.rs`: regular files only), how a name or an argument becomes a file
//! name and what a tool may be called (`names.rs`), how a file is written (`write.rs`:
//! atomically, never truncating a user's file, one writer per key), how a child process is
//! started and ended (`child.rs`: its own process group, killed whole at a time-out or an
//! interrupt), and how stdout is printed (`stdout.rs`: a closed stdout drops the rest, the work
//! goes on), what day it is (`clock.rs`), and how much memory a piece of work a file decides may
//! hold (`memory_cap.rs`). It depends on nothing else in the crate, so `harness`, `tools`, `exec`, `eval`
//! and `bench` all use it.

pub mod child;
pub mod clock;
pub mod input;
pub mod memory_cap;
pub mod names;
pub mod stdout;
pub mod write;
