//! Running a run's units, shared by `run` (eval) and `bench`: the scheduler that runs them one
//! at a time or at once over one model, where the run's time and tokens went, run ids, per-unit
//! seeds and progress on stderr. It drives any [`crate::harness::backend::Backend`] and knows
//! nothing of packs, judges or benchmarks.

pub mod profile;
pub mod progress;
pub mod run_id;
pub mod scheduler;
pub mod seed;
