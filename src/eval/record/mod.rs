//! The run folder and everything in it that a run records: the journal of finished units
//! (`journal.rs`), which lines belong in it (`plan_shape.rs`), the manifest of the run's inputs
//! with its one reader (`manifest.rs`), a sequential run's looks in it (`looks.rs`), the
//! folder's file names, finding, opening and locking one, and writing its JSON (`folder.rs`), and
//! a run folder read back whole (`load.rs`). `run`, `merge`, `reuse`, `rejudge` and the reports
//! go through it and never through each other; what the statistics make of it is
//! `run_summary`'s.

pub mod folder;
pub mod journal;
pub mod load;
pub mod looks;
pub mod manifest;
pub mod plan_shape;

pub use folder::{find, RunFolder};
pub use journal::{Journal, JournalEntry};
pub use load::{load, RunRecord};
pub use looks::{Look, SequentialRecord, Stop};
pub use manifest::Manifest;
pub use plan_shape::PlanShape;
