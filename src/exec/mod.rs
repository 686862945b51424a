//! Running a run's units, shared by `run` (eval) and `bench`: the scheduler that runs them one
//! at a time or at once over one model, the sinks each finished unit goes to (`sink.rs`), where
//! the run's time and tokens went, run ids, per-unit seeds, progress on stderr and what an
//! interrupt says. It drives any [`crate::harness::backend::Backend`] and knows
//! nothing of packs, judges or benchmarks.

#[cfg(unix)]
pub mod interrupt;
pub mod profile;
pub mod progress;
pub mod run_id;
pub mod scheduler;
pub mod seed;
pub mod sink;
