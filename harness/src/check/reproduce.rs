//! Reproducers: one case with everything needed to run it again, written inside the
//! folder the user named, and replayed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::report::Report;
use super::{run_cases, CheckError, CheckOptions, Subject};
use crate::adapter::Adapter;
use crate::cases::{Case, Upstream};

/// A reproducer file: one case with everything needed to run it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reproducer {
    /// The contract folder.
    pub contract: PathBuf,
    /// The seed of the run that found it.
    pub seed: u64,
    /// The case.
    pub case: Case,
}

/// Run exactly the case of a reproducer.
///
/// # Errors
///
/// When its contract cannot be loaded.
pub fn replay(reproducer: &Reproducer, adapter: &mut dyn Adapter) -> Result<Report, CheckError> {
    let subject = Subject::load(&reproducer.contract)?;
    let options = CheckOptions {
        seed: reproducer.seed,
        random_cases: 0,
        reproducers: None,
        max_duration: None,
        shard: None,
    };
    let start = Instant::now();
    let report = run_cases(
        &subject,
        std::slice::from_ref(&reproducer.case),
        &options,
        None,
        adapter,
        &mut |_| {},
    )?;
    Ok(Report {
        seed: reproducer.seed,
        contracts: vec![report],
        elapsed: start.elapsed(),
    })
}

/// Write a reproducer (`<dir>/<tool>/<case>.case.json`, the body and the request
/// beside it); its path. The tool and the case id are made one safe file-name component
/// each, so nothing is written outside `dir`.
pub(crate) fn write_reproducer(
    dir: &Path,
    subject: &Subject,
    seed: u64,
    case: &Case,
    request: &airlock_guard::Request,
) -> Result<PathBuf, CheckError> {
    let contract = subject.guard.contract();
    let folder = reproducer_folder(dir, contract.tool());
    let failed = |path: &Path, e: &dyn fmt::Display| CheckError::Reproducer {
        path: path.to_path_buf(),
        reason: format!("cannot write the reproducer: {e}"),
    };
    std::fs::create_dir_all(&folder).map_err(|e| failed(&folder, &e))?;
    let name = file_stem(&case.id);
    let mut case = case.clone();
    case.request = request.clone();
    let reproducer = Reproducer {
        contract: contract.dir().map(Path::to_path_buf).unwrap_or_default(),
        seed,
        case: case.clone(),
    };
    let write = |path: PathBuf, bytes: Result<Vec<u8>, serde_json::Error>| {
        let bytes = bytes.map_err(|e| failed(&path, &e))?;
        std::fs::write(&path, bytes).map_err(|e| failed(&path, &e))?;
        Ok::<_, CheckError>(path)
    };
    let path = write(
        folder.join(format!("{name}.case.json")),
        serde_json::to_vec_pretty(&reproducer),
    )?;
    if let Upstream::Body(bytes) = &case.upstream {
        write(folder.join(format!("{name}.json")), Ok(bytes.clone()))?;
    }
    write(
        folder.join(format!("{name}.request.json")),
        serde_json::to_vec_pretty(request),
    )?;
    Ok(path)
}

/// The folder of a tool's reproducers: always a direct child of `dir`, whatever the
/// tool's name holds.
fn reproducer_folder(dir: &Path, tool: &str) -> PathBuf {
    dir.join(crate::cases::file_component(tool))
}

/// A file-name-safe, unique stem for a case id.
fn file_stem(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    format!("{safe}-{:08x}", crate::cases::fnv1a(id.as_bytes()) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducers_of_a_hostile_tool_name_stay_inside_the_reproducer_folder() {
        let dir = Path::new("/tmp/reproducers");
        for tool in ["../../outside", "..", "/etc", "a/../../b"] {
            assert_eq!(reproducer_folder(dir, tool).parent(), Some(dir), "{tool:?}");
        }
        assert_eq!(
            reproducer_folder(dir, "review_status"),
            dir.join("review_status")
        );
        for id in ["../../x", "fixture/a@accepted", ".."] {
            let stem = file_stem(id);
            assert!(
                !stem.contains('/') && !stem.starts_with('.'),
                "{id:?} -> {stem}"
            );
        }
    }
}
