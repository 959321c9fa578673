//! Providers over real HTTP against the vendor-format mock server.

#![allow(clippy::unwrap_used, reason = "test helpers outside #[test] fns")]

mod claude;
mod common;
mod fault_matrix;
mod gemini;
mod openai;
mod resilience;
