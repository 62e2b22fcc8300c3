//! Reproducers: one case with everything needed to run it again, written inside the
//! folder the user named, and replayed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::report::{FindingKind, Report};
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

/// A reproducer a run kept instead of writing (it had no reproducer folder), within the
/// cap per class and kind: [`Report::assert_clean`] writes them, and a replay writes the
/// shrunk case beside the file it replayed.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    /// The case as a reproducer file holds it (shrunk when it could be); its body left
    /// empty when `rebuild` builds it.
    pub reproducer: Reproducer,
    /// The contract's tool (the reproducer's subfolder).
    pub tool: String,
    /// What the shrunk case drew, when the case was shrunk.
    pub shrunk: Option<ShrunkAnswer>,
    /// For a body sized from a large `max_bytes` that was not shrunk: how to build it
    /// again when the reproducer is written, instead of holding megabytes per kept case
    /// for the whole run.
    pub rebuild: Option<Rebuild>,
}

impl Kept {
    /// The reproducer to write, its body built when it is not held.
    pub(crate) fn reproducer(&self) -> Reproducer {
        let mut reproducer = self.reproducer.clone();
        if let Some(Rebuild(build)) = &self.rebuild {
            reproducer.case.upstream = Upstream::Body(build());
        }
        reproducer
    }
}

/// How a kept case's body is built ([`crate::adversary::generate_later`]'s builder).
#[derive(Clone)]
pub(crate) struct Rebuild(pub crate::adversary::Later);

impl fmt::Debug for Rebuild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rebuild")
    }
}

/// The reference's value, the adapter's answer and the findings of a shrunk case.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ShrunkAnswer {
    /// The size of the body before shrinking.
    pub original_bytes: usize,
    /// The size after.
    pub shrunk_bytes: usize,
    /// The reference's agent value.
    pub expected: serde_json::Value,
    /// The adapter's answer (`null` when it crashed, hung or broke the protocol).
    pub actual: Option<serde_json::Value>,
    /// The findings on the shrunk case.
    pub findings: Vec<ShrunkFinding>,
}

/// One finding on a shrunk case.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ShrunkFinding {
    pub kind: FindingKind,
    pub message: String,
}

/// The files a replay wrote beside its reproducer: the shrunk case, as a reproducer of
/// its own, its body, and what the reference and the adapter said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShrunkFiles {
    /// `<stem>.shrunk.case.json`: replayable with `--replay`.
    pub case: PathBuf,
    /// `<stem>.shrunk.json`: the shrunk body's bytes.
    pub body: PathBuf,
    /// `<stem>.shrunk.answer.json`: `expected`, `actual` and `findings` of the shrunk case.
    pub answer: PathBuf,
}

/// Run exactly the case of a reproducer.
///
/// # Errors
///
/// When its contract cannot be loaded.
pub fn replay(reproducer: &Reproducer, adapter: &mut dyn Adapter) -> Result<Report, CheckError> {
    let mut report = replay_keeping(reproducer, adapter)?;
    for contract in &mut report.contracts {
        contract.kept.clear();
    }
    Ok(report)
}

/// Run exactly the case of the reproducer file `path` and, when its finding was shrunk,
/// write the shrunk case beside it ([`ShrunkFiles`]: `<stem>.shrunk.case.json`,
/// `<stem>.shrunk.json`, `<stem>.shrunk.answer.json`, where `<stem>` is the file's name
/// without `.case.json`); the findings name the shrunk reproducer. The file replayed is
/// never overwritten, and nothing is written outside its folder.
///
/// # Errors
///
/// When its contract cannot be loaded, or the shrunk case cannot be written.
pub fn replay_beside(
    reproducer: &Reproducer,
    path: &Path,
    adapter: &mut dyn Adapter,
) -> Result<(Report, Option<ShrunkFiles>), CheckError> {
    let mut report = replay_keeping(reproducer, adapter)?;
    let Some(contract) = report.contracts.first_mut() else {
        return Ok((report, None));
    };
    let kept = std::mem::take(&mut contract.kept);
    let Some((kept, answer)) = kept
        .into_iter()
        .find_map(|k| k.shrunk.clone().map(|a| (k, a)))
    else {
        return Ok((report, None));
    };
    let files = write_shrunk(path, &kept.reproducer, &answer)?;
    for finding in &mut contract.findings {
        if finding.case == kept.reproducer.case.id {
            finding.reproducer = Some(files.case.clone());
        }
    }
    Ok((report, Some(files)))
}

/// [`replay`], keeping the (shrunk) case in the report.
fn replay_keeping(
    reproducer: &Reproducer,
    adapter: &mut dyn Adapter,
) -> Result<Report, CheckError> {
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
        &crate::adversary::LaterBodies::default(),
        &options,
        None,
        adapter,
        &mut |_| {},
    )?;
    Ok(Report {
        seed: reproducer.seed,
        contracts: vec![report],
        elapsed: start.elapsed(),
        shown_per_class: Some(super::MAX_FINDINGS_SHOWN_PER_CLASS),
    })
}

/// Write the shrunk case of the reproducer file `path` beside it.
fn write_shrunk(
    path: &Path,
    shrunk: &Reproducer,
    answer: &ShrunkAnswer,
) -> Result<ShrunkFiles, CheckError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".case.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name);
    let folder = path.parent().unwrap_or(Path::new(""));
    // Each name is the stem and a suffix longer than `.case.json`: never the replayed
    // file's own name. A link there to the replayed file is refused too.
    let files = ShrunkFiles {
        case: folder.join(format!("{stem}.shrunk.case.json")),
        body: folder.join(format!("{stem}.shrunk.json")),
        answer: folder.join(format!("{stem}.shrunk.answer.json")),
    };
    let input = path.canonicalize().ok();
    let write = |target: &Path, bytes: Result<Vec<u8>, serde_json::Error>| {
        let failed = |reason: String| CheckError::Reproducer {
            path: target.to_path_buf(),
            reason,
        };
        if input.is_some() && target.canonicalize().ok() == input {
            return Err(failed(
                "is the reproducer being replayed: not overwritten".into(),
            ));
        }
        let bytes = bytes.map_err(|e| failed(format!("cannot write the shrunk case: {e}")))?;
        std::fs::write(target, bytes)
            .map_err(|e| failed(format!("cannot write the shrunk case: {e}")))
    };
    write(&files.case, serde_json::to_vec_pretty(shrunk))?;
    let body = match &shrunk.case.upstream {
        Upstream::Body(bytes) => bytes.clone(),
        Upstream::Transport(_) => Vec::new(),
    };
    write(&files.body, Ok(body))?;
    write(&files.answer, serde_json::to_vec_pretty(answer))?;
    Ok(files)
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
    let mut case = case.clone();
    case.request = request.clone();
    let reproducer = Reproducer {
        contract: contract.dir().map(Path::to_path_buf).unwrap_or_default(),
        seed,
        case,
    };
    write_reproducer_file(dir, contract.tool(), &reproducer)
}

/// Write `reproducer` of `tool` under `dir` (the layout of [`write_reproducer`]).
pub(crate) fn write_reproducer_file(
    dir: &Path,
    tool: &str,
    reproducer: &Reproducer,
) -> Result<PathBuf, CheckError> {
    let folder = reproducer_folder(dir, tool);
    let failed = |path: &Path, e: &dyn fmt::Display| CheckError::Reproducer {
        path: path.to_path_buf(),
        reason: format!("cannot write the reproducer: {e}"),
    };
    std::fs::create_dir_all(&folder).map_err(|e| failed(&folder, &e))?;
    let case = &reproducer.case;
    let name = file_stem(&case.id);
    let write = |path: PathBuf, bytes: Result<Vec<u8>, serde_json::Error>| {
        let bytes = bytes.map_err(|e| failed(&path, &e))?;
        std::fs::write(&path, bytes).map_err(|e| failed(&path, &e))?;
        Ok::<_, CheckError>(path)
    };
    let path = write(
        folder.join(format!("{name}.case.json")),
        serde_json::to_vec_pretty(reproducer),
    )?;
    if let Upstream::Body(bytes) = &case.upstream {
        write(folder.join(format!("{name}.json")), Ok(bytes.clone()))?;
    }
    write(
        folder.join(format!("{name}.request.json")),
        serde_json::to_vec_pretty(&case.request),
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

    /// A run without a reproducer folder keeps a large case it cannot shrink as how to
    /// build its body, and writes the body whole: an adapter that admits bodies past a
    /// 1 MiB limit (the guard of the same contract at 4 MiB) fails the oversize cases,
    /// which no smaller body keeps failing; the kept cases hold none of those bodies, the
    /// reproducers written hold exactly the bodies the adversary generates.
    #[test]
    fn a_kept_large_case_is_built_again_when_written() {
        use crate::adapter::GuardAdapter;
        use crate::adversary::tests::at_limit;
        use airlock_guard::{Contract, Guard};
        let (reference, adapter) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (dir, corpus) = at_limit(reference.path(), "review_status", 1 << 20);
        let subject = Subject::load_with_corpus(&dir, Some(&corpus)).unwrap();
        let (lenient, _) = at_limit(adapter.path(), "review_status", 4 << 20);
        let mut adapter = GuardAdapter::new([Guard::new(Contract::load(&lenient).unwrap())]);
        let options = CheckOptions {
            random_cases: 0,
            ..CheckOptions::default()
        };
        let generated =
            crate::adversary::generate(subject.guard.contract(), &subject.corpus, options.seed, 0);
        let report = super::super::run(
            std::slice::from_ref(&subject),
            &options,
            &mut adapter,
            &mut |_| {},
        )
        .unwrap();
        let kept = &report.contracts[0].kept;
        let rebuilt: Vec<&Kept> = kept.iter().filter(|k| k.rebuild.is_some()).collect();
        assert!(
            rebuilt
                .iter()
                .any(|k| k.reproducer.case.class == "oversize"),
            "{:?}",
            kept.iter()
                .map(|k| &k.reproducer.case.id)
                .collect::<Vec<_>>()
        );
        for k in rebuilt {
            assert_eq!(k.reproducer.case.upstream, Upstream::Body(Vec::new()));
            let written = k.reproducer();
            let original = generated.iter().find(|c| c.id == written.case.id).unwrap();
            assert!(
                written.case.upstream == original.upstream,
                "{}",
                written.case.id
            );
            assert!(matches!(&written.case.upstream, Upstream::Body(b) if b.len() > 1 << 20));
        }
    }
}
