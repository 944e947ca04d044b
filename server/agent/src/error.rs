//! The agent's one error type.

/// Everything an agent operation can fail with. Messages are one lowercase line.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the agent was destroyed")]
    Destroyed,
    #[error("invalid agent options: {0}")]
    Options(String),
    #[error(transparent)]
    Mcp(#[from] wave_mcp_manager::Error),
    #[error("model request to {url} failed: {reason}")]
    ModelRequest { url: String, reason: String },
    #[error("model server answered {status}: {body}")]
    ModelStatus { status: u16, body: String },
    #[error("unexpected model reply: {0}")]
    ModelReply(String),
    #[error("the model was still calling tools after {0} rounds; the turn was stopped")]
    RoundLimit(usize),
    /// A prompt command or a resource mention that cannot be carried out (PRM-2, PRM-3).
    #[error("{0}")]
    Input(String),
    /// An app asked for a call it may not make, or the user declined it (APPS-4).
    #[error("{0}")]
    AppRefused(String),
    /// The tool-search model's files cannot be read or run (BUD-7).
    #[error("embedding model: {0}")]
    Embedding(String),
    #[error("no message at index {index} (the history has {len})")]
    NoSuchMessage { index: usize, len: usize },
}
