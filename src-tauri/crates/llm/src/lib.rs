//! LLM providers behind one streaming interface (seed §6, §11, §12).

mod chunk;
mod error;
mod provider;

pub use chunk::{Completion, FinishReason, StreamChunk};
pub use error::LlmError;
pub use provider::{ChatRequest, ChunkStream, Provider};
