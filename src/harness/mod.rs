//! The embedded agent harness: prompt, model, tool calls, skills and the round loop.
//! It knows nothing of packs, fixtures or judges.

pub mod agent;
pub mod backend;
pub mod builtins;
pub mod chat_template;
pub mod conversation;
pub mod deferred;
pub mod examples;
pub mod prompt;
pub mod skills;
pub mod spill;
pub mod template;
pub mod toolcall;
pub mod tools;
pub mod transcript;
