//! Shared by the integration tests, so that no test file keeps its own copy: the real model
//! (`model`, full tier only), test packs and deterministic models (`scripted`,
//! `scripted_backend`), the binary (`cli`), files and journals (`files`), throw-away git
//! repositories (`git_repo`), run and bench options (`options`), a recording run and its replay
//! (`recording`), knobs from the environment (`env`), and BFCL's helper and fixtures (`bfcl`).

// Each test binary uses its own part of this module.
#![allow(dead_code)]

pub mod bfcl;
pub mod cli;
pub mod env;
pub mod files;
pub mod git_repo;
pub mod model;
pub mod options;
pub mod recording;
pub mod scripted;
pub mod scripted_backend;
