//! A server's state, as the registry reports it and its errors name it.

use serde::Serialize;

/// A server's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerStatus {
    Stopped,
    Starting,
    Ready,
    Failed { reason: String },
    Restarting { attempt: u32 },
}

impl ServerStatus {
    /// Ready, failed or stopped: not on its way somewhere.
    pub fn is_settled(&self) -> bool {
        matches!(self, Self::Ready | Self::Failed { .. } | Self::Stopped)
    }
}

impl std::fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stopped => f.write_str("stopped"),
            Self::Starting => f.write_str("starting"),
            Self::Ready => f.write_str("ready"),
            Self::Failed { reason } => write!(f, "failed: {reason}"),
            Self::Restarting { attempt } => write!(f, "restarting (attempt {attempt})"),
        }
    }
}
