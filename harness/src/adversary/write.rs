//! `airlock mutate` as a library: a contract's catalogue written as raw files, one
//! request file each, and a `manifest.json` saying what the reference decided.

use serde_json::json;
use std::path::{Path, PathBuf};

use super::{generate, CLASSES};
use crate::base::error::WriteFileError;
use crate::base::subject::Subject;
use crate::cases::{Expectation, Upstream};

/// Which variants [`write_variants`] writes.
#[derive(Debug, Clone, Default)]
pub struct MutateOptions {
    /// Only these classes (all when empty).
    pub classes: Vec<String>,
    /// Only variants derived from this fixture (by name, its file name without `.json`).
    pub fixture: Option<String>,
    /// Seed of canaries and random variants.
    pub seed: u64,
    /// Random mutation variants to add.
    pub random: usize,
}

impl MutateOptions {
    /// Whether the options name only classes of the catalogue and a fixture of
    /// `subject`'s corpus.
    ///
    /// # Errors
    ///
    /// [`MutateOptionsError`] naming the unknown class or fixture.
    pub fn check(&self, subject: &Subject) -> Result<(), MutateOptionsError> {
        if let Some(class) = self
            .classes
            .iter()
            .find(|c| !CLASSES.iter().any(|(name, _)| name == c))
        {
            return Err(MutateOptionsError::UnknownClass {
                class: class.clone(),
            });
        }
        if let Some(name) = &self.fixture {
            if !subject.corpus.fixtures.iter().any(|f| &f.name == name) {
                return Err(MutateOptionsError::UnknownFixture { name: name.clone() });
            }
        }
        Ok(())
    }
}

/// What [`MutateOptions::check`] found the options to name that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MutateOptionsError {
    /// A class that is not in the catalogue.
    #[error("unknown class {class:?}; see airlock mutate --list-classes")]
    UnknownClass {
        /// The class as given.
        class: String,
    },
    /// A fixture name that is not in the subject's corpus.
    #[error("{name} is not a fixture of this contract's corpus")]
    UnknownFixture {
        /// The fixture name as given (its file name without `.json`).
        name: String,
    },
}

/// Write `subject`'s variants chosen by `options` into `out` (created): for each,
/// `NNNNN-<class>.json` (the body, when there is one) and `NNNNN-<class>.request.json`,
/// then `manifest.json` (`{"tool", "seed", "variants": [{"id", "class", "location",
/// "origin", "file", "transport_error", "request_file", "expected", "by_construction",
/// "stage", "canaries", "agent"}]}`), `agent` being the exact JSON text the reference
/// gives the agent (what a binding or a port of the guard must give byte for byte). How
/// many variants were written.
///
/// # Errors
///
/// The file or folder that could not be written, and why.
pub fn write_variants(
    subject: &Subject,
    options: &MutateOptions,
    out: &Path,
) -> Result<usize, WriteFileError> {
    let write = |path: PathBuf, bytes: &[u8]| {
        std::fs::write(&path, bytes).map_err(WriteFileError::at(&path))
    };
    let guard = &subject.guard;
    std::fs::create_dir_all(out).map_err(WriteFileError::at(out))?;
    let mut manifest = Vec::new();
    for case in generate(
        guard.contract(),
        &subject.corpus,
        options.seed,
        options.random,
    ) {
        if !options.classes.is_empty() && !options.classes.contains(&case.class) {
            continue;
        }
        if options.fixture.is_some() && case.origin != options.fixture {
            continue;
        }
        let stem = format!("{:05}-{}", manifest.len(), case.class);
        let request_file = format!("{stem}.request.json");
        let request = serde_json::to_vec_pretty(&case.request).unwrap_or_default();
        write(out.join(&request_file), &request)?;
        let (admission, body_file, transport) = match &case.upstream {
            Upstream::Body(bytes) => {
                let file = format!("{stem}.json");
                write(out.join(&file), bytes)?;
                (guard.admit(&case.request, bytes), Some(file), None)
            }
            Upstream::Transport(e) => (
                guard.admit_transport_error(&case.request, *e),
                None,
                Some(e.as_str()),
            ),
        };
        let expected = match admission.audit().verdict() {
            airlock_guard::Verdict::Admitted | airlock_guard::Verdict::UpstreamFailure => "admit",
            airlock_guard::Verdict::TransportFailure => "transport",
            airlock_guard::Verdict::Rejected => "reject",
        };
        manifest.push(json!({
            "id": case.id,
            "class": case.class,
            "location": case.location,
            "origin": case.origin,
            "file": body_file,
            "transport_error": transport,
            "request_file": request_file,
            "expected": expected,
            "by_construction": case.expect != Expectation::Reference,
            "stage": admission.audit().stage(),
            "canaries": case.canaries,
            "agent": admission.agent().to_json_string(),
        }));
    }
    let count = manifest.len();
    let document =
        json!({"tool": guard.contract().tool(), "seed": options.seed, "variants": manifest});
    write(
        out.join("manifest.json"),
        &serde_json::to_vec_pretty(&document).unwrap_or_default(),
    )?;
    Ok(count)
}
