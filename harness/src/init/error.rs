//! Why `airlock init` wrote nothing: the file at fault and what is wrong with it, one
//! variant per reason, each message the one the command prints.

use airlock_guard::{ContractError, Diagnostic, ParseError};
use std::path::{Path, PathBuf};

use crate::corpus::{BoundedReadError, CorpusError};

/// Why `init` wrote nothing.
///
/// Its `Display` is the whole message; only [`InitError::Write`] has a `source()`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// The tool name is not one plain file-name component.
    #[error("{tool:?} is not a tool name: use 1 to 128 of A-Z a-z 0-9 _ . -")]
    ToolName {
        /// The name as given.
        tool: String,
    },
    /// A request file (`--request`, or `NAME.request.json` beside a sample), or the
    /// corpus written for the scaffold, does not load.
    #[error("{0}")]
    Corpus(CorpusError),
    /// A sample or near miss cannot be read, or is over 64 MiB.
    #[error("{0}")]
    Read(BoundedReadError),
    /// A sample is not strict JSON.
    #[error("{}: not strict JSON: {error}", path.display())]
    NotJson {
        /// The sample.
        path: PathBuf,
        /// The strict parser's reason (with its byte offset).
        error: ParseError,
    },
    /// A success envelope without an object `data`.
    #[error("{}: a success without an object `data`", path.display())]
    NoData {
        /// The sample.
        path: PathBuf,
    },
    /// A sample that is not a JSON object.
    #[error(
        "{}: a sample must be a JSON object (an envelope, or the `data` object alone)",
        path.display()
    )]
    NotAnObject {
        /// The sample.
        path: PathBuf,
    },
    /// No sample was given.
    #[error("no sample: give at least one response with --sample")]
    NoSamples,
    /// A sample of `--lines` output that is not a line grammar init can read.
    #[error("{}: {reason}", path.display())]
    Lines {
        /// The sample.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A `--vendor` sample that is not a JSON object.
    #[error("{}: a vendor sample must be a JSON object (a response body)", path.display())]
    VendorNotAnObject {
        /// The sample.
        path: PathBuf,
    },
    /// No sample is a success.
    #[error("no success sample: give at least one response with data")]
    NoSuccess,
    /// An `--agent-field` that no sample's data holds.
    #[error(
        "--agent-field {field:?} is not a member of any sample's data: give a JSON pointer \
         such as /data/{example}"
    )]
    AgentField {
        /// The pointer as given.
        field: String,
        /// A member of the first sample's data to suggest (`name` when it has none).
        example: String,
    },
    /// The samples' data objects are all empty.
    #[error(
        "the samples' data has no members: there is nothing to hand to the agent; give \
         samples with data"
    )]
    NoMembers,
    /// The contract or corpus folder already exists.
    #[error("{} exists: init never overwrites a contract; choose another --out", path.display())]
    Exists {
        /// The folder.
        path: PathBuf,
    },
    /// The contract written from the samples does not load.
    #[error("the contract inferred from the samples does not load, so none was written: {0}")]
    Inferred(ContractError),
    /// A sample the scaffold's guard does not decide as its folder says (a failure sample
    /// with an unknown code, say).
    #[error(
        "sample {} does not fit the contract scaffolded from the samples, so no contract was written ({})",
        sample.display(),
        diagnostic.as_ref().map(ToString::to_string).unwrap_or_default()
    )]
    Unfit {
        /// The sample's file (its fixture name when the file is not known).
        sample: PathBuf,
        /// The guard's diagnostic, when it gave one.
        diagnostic: Option<Diagnostic>,
    },
    /// The scaffold held in memory does not build (a bug in init).
    #[error("the scaffold does not load (a bug in init): {0}")]
    Scaffold(ContractError),
    /// A field of the scaffold held in memory is no JSON pointer (a bug in init).
    #[error("{field}: {reason}")]
    ScaffoldField {
        /// The field.
        field: String,
        /// Why it is no pointer (the guard's words).
        reason: airlock_guard::PointerError,
    },
    /// A file or folder could not be written (nothing is left behind).
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
}

impl InitError {
    /// The file or folder at fault, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            InitError::Corpus(e) => Some(e.path()),
            InitError::Read(e) => Some(e.path()),
            InitError::NotJson { path, .. }
            | InitError::NoData { path }
            | InitError::NotAnObject { path }
            | InitError::VendorNotAnObject { path }
            | InitError::Lines { path, .. }
            | InitError::Exists { path }
            | InitError::Write { path, .. } => Some(path),
            InitError::Unfit { sample, .. } => Some(sample),
            _ => None,
        }
    }
}

impl From<CorpusError> for InitError {
    fn from(error: CorpusError) -> Self {
        InitError::Corpus(error)
    }
}

impl From<BoundedReadError> for InitError {
    fn from(error: BoundedReadError) -> Self {
        InitError::Read(error)
    }
}
