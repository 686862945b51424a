//! Evaluation: packs, corpora, fixtures, the judge, the plan, the run folder (`record/`),
//! statistics and reports.
//! It drives the harness and knows nothing of llama.cpp.

pub mod arm;
pub mod corpus;
pub mod digest;
pub mod fixture_store;
pub mod gate;
pub mod init;
pub mod judge;
pub mod judgement;
pub mod law_cases;
pub mod merge;
pub mod pack;
pub mod plan;
pub mod record;
pub mod rejudge;
pub mod replay;
pub mod replayer;
pub mod report;
pub mod request;
pub mod reuse;
pub mod run_summary;
pub mod runner;
pub mod score;
pub mod shard;
pub mod spending;
pub mod stamp;
pub mod stats;
