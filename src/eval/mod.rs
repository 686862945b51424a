//! Evaluation: packs, corpora, fixtures, the judge, the plan, the journal, statistics and reports.
//! It drives the harness and knows nothing of llama.cpp.

pub mod corpus;
pub mod fixtures;
pub mod init;
pub mod journal;
pub mod judge;
pub mod law_cases;
pub mod manifest;
pub mod merge;
pub mod pack;
pub mod plan;
pub mod rejudge;
pub mod replay;
pub mod report;
pub mod reuse;
pub mod runner;
pub mod shard;
pub mod stamp;
pub mod stats;
pub mod waves;
