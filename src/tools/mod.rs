//! Typed tools a pack can offer the model.

pub mod weather;
