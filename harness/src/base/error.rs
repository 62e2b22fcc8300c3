//! Why a contract or its corpus cannot be checked, or a run's files written: the error
//! every capability that loads contracts shares.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::corpus::CorpusError;

/// Why a contract or its corpus cannot be checked, or the run's files written.
#[derive(Debug)]
#[non_exhaustive]
pub enum CheckError {
    /// The contract does not load.
    Contract {
        /// The contract folder.
        dir: PathBuf,
        /// Why.
        source: airlock_guard::ContractError,
    },
    /// The contract's corpus cannot be found or read.
    Corpus {
        /// The contract folder.
        dir: PathBuf,
        /// Why.
        source: CorpusError,
    },
    /// A folder of contracts holds none, or cannot be read.
    NoContracts {
        /// The folder.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
    /// A reproducer, or a fuzz corpus file, could not be written or read.
    Reproducer {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl CheckError {
    /// The folder or file at fault.
    pub fn path(&self) -> &Path {
        match self {
            CheckError::Contract { dir, .. } | CheckError::NoContracts { dir, .. } => dir,
            CheckError::Corpus { source, .. } => source.path(),
            CheckError::Reproducer { path, .. } => path,
        }
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Contract { dir, source } => write!(f, "{}: {source}", dir.display()),
            CheckError::Corpus { dir, source } => {
                write!(f, "the corpus of {}: {source}", dir.display())
            }
            CheckError::NoContracts { dir, reason }
            | CheckError::Reproducer { path: dir, reason } => {
                write!(f, "{}: {reason}", dir.display())
            }
        }
    }
}

// The message holds the whole chain (the variants keep their cause as data): no
// `source()`, so an error chain prints each piece once.
impl std::error::Error for CheckError {}

/// A file or folder that could not be written: which, and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct WriteFileError {
    /// The file or folder.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

impl WriteFileError {
    /// The error writing `path` gave, as a `map_err` argument.
    pub(crate) fn at(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self {
            path: path.to_path_buf(),
            source,
        }
    }
}
