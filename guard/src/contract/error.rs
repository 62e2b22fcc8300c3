//! Why a contract could not be loaded or built: one error type for the whole folder, each
//! variant naming the file or the manifest location at fault.

use std::path::PathBuf;

use crate::schema::SchemaError;

/// Why a contract could not be loaded or built.
///
/// Its `Display` is the whole message (file, reason, what to do). No variant has a
/// `source()`: an error chain (`anyhow`'s `{:#}`) prints each piece once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// A file could not be read.
    #[error("reading {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        error: std::io::Error,
    },
    /// A file of the contract folder cannot be one of its files: a symbolic link, not a
    /// regular file, or (for a file a `$ref` names) unreadable or not strict JSON. The
    /// reason never quotes the file's contents.
    #[error("{}: {reason}", path.display())]
    Resource {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        reason: String,
    },
    /// `contract.toml` is not valid TOML or not the manifest's shape (unknown keys are
    /// errors).
    #[error("{}: {}", path.display(), message.trim_end())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A schema file is not strict JSON. (The message names the problem and its byte
    /// offset, never the bytes themselves.)
    #[error("{}: not strict JSON: {}", path.display(), error.masked_message())]
    SchemaJson {
        /// The schema file.
        path: PathBuf,
        /// The parse failure.
        error: crate::parse::ParseError,
    },
    /// A schema could not be compiled.
    #[error("{}: {error}", path.display())]
    Schema {
        /// The schema file (or `<in memory>`).
        path: PathBuf,
        /// The reason.
        error: SchemaError,
    },
    /// The tool name, a field, duration, code or limit of the manifest is wrong.
    #[error("{location}: {reason}")]
    Invalid {
        /// Where in the manifest (`checks[1].field`, `retry.deadline`, …).
        location: String,
        /// What is wrong.
        reason: String,
    },
}

/// A manifest location and what is wrong there.
pub(crate) fn invalid(location: impl Into<String>, reason: impl Into<String>) -> ContractError {
    ContractError::Invalid {
        location: location.into(),
        reason: reason.into(),
    }
}
