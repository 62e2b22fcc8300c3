//! The subject under test: a contract's reference guard with its corpus, and the
//! contract folders of a schemas folder.

use airlock_guard::{Contract, Guard};
use std::path::{Path, PathBuf};

use super::error::CheckError;
use crate::corpus::{find_corpus, Corpus};

/// A contract with its corpus, ready to check.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The reference guard.
    pub guard: Guard,
    /// The fixtures.
    pub corpus: Corpus,
}

impl Subject {
    /// Load the contract in `dir` and its corpus (`../../corpora/<tool>`).
    ///
    /// # Errors
    ///
    /// When either cannot be loaded.
    pub fn load(dir: &Path) -> Result<Self, CheckError> {
        Self::load_with_corpus(dir, None)
    }

    /// Load the contract in `dir` and its corpus: `corpus` when given, else the one
    /// beside the contract (see [`find_corpus`]).
    ///
    /// # Errors
    ///
    /// When either cannot be loaded; a missing corpus names the folders tried.
    pub fn load_with_corpus(dir: &Path, corpus: Option<&Path>) -> Result<Self, CheckError> {
        let contract = Contract::load(dir).map_err(|source| CheckError::Contract {
            dir: dir.to_path_buf(),
            source,
        })?;
        let corpus = find_corpus(&contract, corpus).map_err(|source| CheckError::Corpus {
            dir: dir.to_path_buf(),
            source,
        })?;
        Ok(Self {
            guard: Guard::new(contract),
            corpus,
        })
    }
}

/// Every contract folder under `schemas` (each holding a `contract.toml`), sorted.
///
/// # Errors
///
/// When the folder cannot be read or holds no contract.
pub fn discover(schemas: &Path) -> Result<Vec<PathBuf>, CheckError> {
    let err = |reason: String| CheckError::NoContracts {
        dir: schemas.to_path_buf(),
        reason,
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(schemas)
        .map_err(|e| err(e.to_string()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(airlock_guard::MANIFEST).is_file())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(err("no contract folders (with contract.toml) found".into()));
    }
    Ok(dirs)
}
