//! The one error type of the bench: a message that says what failed and
//! where (experiment, parameter, interface, switch), meant for a person.

/// A bench failure, as a sentence for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BenchError(pub String);

pub type Result<T> = std::result::Result<T, BenchError>;

impl BenchError {
    pub fn new(msg: impl Into<String>) -> Self {
        BenchError(msg.into())
    }

    /// Prefix the message with where it happened.
    pub fn context(self, what: impl std::fmt::Display) -> Self {
        BenchError(format!("{what}: {}", self.0))
    }
}

impl From<std::io::Error> for BenchError {
    fn from(e: std::io::Error) -> Self {
        BenchError(e.to_string())
    }
}

impl From<nix::Error> for BenchError {
    fn from(e: nix::Error) -> Self {
        BenchError(e.to_string())
    }
}

impl From<String> for BenchError {
    fn from(s: String) -> Self {
        BenchError(s)
    }
}

impl From<&str> for BenchError {
    fn from(s: &str) -> Self {
        BenchError(s.to_string())
    }
}

/// Attach context to any displayable error.
pub trait Context<T> {
    fn ctx(self, what: impl std::fmt::Display) -> Result<T>;
}

impl<T, E: std::fmt::Display> Context<T> for std::result::Result<T, E> {
    fn ctx(self, what: impl std::fmt::Display) -> Result<T> {
        self.map_err(|e| BenchError(format!("{what}: {e}")))
    }
}

/// `bail!("fmt", args)`: return early with a [`BenchError`].
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::BenchError(format!($($arg)*)))
    };
}
