//! skilleval: measures whether a skill's new wording makes a small local model behave better
//! or worse, per category, with the noise of repeated runs shown.

pub mod base;
pub mod bench;
pub mod cli;
pub mod eval;
pub mod exec;
pub mod harness;
pub mod model_path;
pub mod tools;

/// Counts what a capped thread holds (`base::memory_cap`); the system allocator otherwise.
#[global_allocator]
static ALLOCATOR: base::memory_cap::CappedAlloc = base::memory_cap::CappedAlloc;

/// The llama.cpp binding this build links (pinned in Cargo.toml), for manifests.
pub const LLAMA_CPP_2_VERSION: &str = "0.1.160";
