//! `airlock validate`: strict parse and schema (format asserted) on standalone files, one
//! verdict per instance.

use airlock_guard::{
    load_schema_file, read_limited, CompiledSchema, ContractError, Diagnostic, ReadError, Stage,
    MAX_BYTES_CEILING,
};
use std::fmt;
use std::path::{Path, PathBuf};

/// Options of a validate run.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    /// The schema file (`true` alone is a pure strict-parse check).
    pub schema: PathBuf,
    /// Largest instance accepted (default, and at most: [`MAX_BYTES_CEILING`]).
    pub max_bytes: Option<u64>,
    /// Deepest nesting accepted (default: 128).
    pub max_depth: usize,
}

/// The default `--max-depth` of `airlock validate`.
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// The verdict on one instance file.
#[derive(Debug)]
pub enum InstanceVerdict {
    /// Strict JSON and valid under the schema.
    Valid,
    /// Rejected at a stage, with the reason.
    Invalid(Diagnostic),
    /// The file could not be read.
    Unreadable(std::io::Error),
}

impl fmt::Display for InstanceVerdict {
    /// `valid`, `invalid: <stage>: <reason>` or `error: <reason>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceVerdict::Valid => f.write_str("valid"),
            InstanceVerdict::Invalid(d) => {
                write!(f, "invalid: {d}")?;
                if let Some(cause) = d.causes().first() {
                    write!(f, " (closest branch: {cause})")?;
                }
                Ok(())
            }
            InstanceVerdict::Unreadable(e) => write!(f, "error: {e}"),
        }
    }
}

/// A compiled schema with the limits of a validate run.
#[derive(Debug)]
pub struct Validation {
    schema: CompiledSchema,
    max_bytes: u64,
    max_depth: usize,
}

impl Validation {
    /// Compile the schema of `options`.
    ///
    /// # Errors
    ///
    /// When the schema cannot be read or compiled.
    pub fn new(options: &ValidateOptions) -> Result<Self, ContractError> {
        Ok(Self {
            schema: load_schema_file(&options.schema)?,
            max_bytes: options
                .max_bytes
                .unwrap_or(MAX_BYTES_CEILING)
                .min(MAX_BYTES_CEILING),
            max_depth: options.max_depth,
        })
    }

    /// Judge one instance file.
    pub fn instance(&self, path: &Path) -> InstanceVerdict {
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) => return InstanceVerdict::Unreadable(e),
        };
        let bytes = match read_limited(file, self.max_bytes) {
            Ok(bytes) => bytes,
            Err(ReadError::Io(e)) => return InstanceVerdict::Unreadable(e),
            Err(ReadError::TooLarge { .. }) => {
                let message = format!("body exceeds max_bytes = {}", self.max_bytes);
                return InstanceVerdict::Invalid(Diagnostic::new(
                    Stage::Limits,
                    "max_bytes",
                    message.clone(),
                    message,
                ));
            }
        };
        self.bytes(&bytes)
    }

    /// Judge instance bytes.
    pub fn bytes(&self, bytes: &[u8]) -> InstanceVerdict {
        match self.schema.validate_bytes(bytes, self.max_depth) {
            Ok(()) => InstanceVerdict::Valid,
            Err(d) => InstanceVerdict::Invalid(d),
        }
    }
}
