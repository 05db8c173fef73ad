//! One error type for the core. Every variant's message says what was wrong and what to do.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// An option value that is out of range or does not fit the other options.
    #[error("{0}")]
    Option(String),
    /// Input text that cannot be used (invalid UTF-8, a bad count line, an empty corpus).
    #[error("{0}")]
    Input(String),
    /// A model file that is truncated, corrupt, of an unknown version, or inconsistent.
    #[error("{0}")]
    ModelFile(String),
    /// A piece or id with no row.
    #[error("{0}")]
    UnknownPiece(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }
}
