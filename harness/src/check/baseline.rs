//! Baselines: findings a team accepts for a while. An entry matches findings by contract,
//! variant class, location and kind (never by case id, so it survives seed changes),
//! carries a mandatory reason and expiry date; a matched finding is reported as
//! baselined and does not fail the run, an expired entry does, and an entry that matches
//! nothing is reported as stale.

use airlock_guard::jiff::civil::Date;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::report::{FindingKind, Report};
use crate::base::report::stable_location;

/// A baseline file: `[[finding]]` entries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The accepted findings.
    #[serde(default, rename = "finding")]
    pub entries: Vec<Entry>,
}

/// One accepted finding. Its `location` may write a canary member name as `<canary>`
/// (written baselines do), so that it matches whatever the seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The contract's tool.
    pub contract: String,
    /// The variant class.
    pub class: String,
    /// The location (JSON pointer, `byte:N`, or empty).
    pub location: String,
    /// The finding kind (`verdict`, `leak`, …).
    pub kind: String,
    /// Why it is accepted (mandatory, not empty).
    pub reason: String,
    /// The last day it is accepted: a TOML date (`2027-01-31`) or a string
    /// (`"2027-01-31"`).
    #[serde(deserialize_with = "date")]
    pub expires: Date,
}

/// A date written as a TOML local date or as a `YYYY-MM-DD` string.
fn date<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Date, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Text(String),
        Toml(toml::value::Datetime),
    }
    let text = match Written::deserialize(deserializer)? {
        Written::Text(text) => text,
        Written::Toml(datetime) => match (datetime.date, datetime.time) {
            (Some(date), None) => date.to_string(),
            _ => {
                return Err(serde::de::Error::custom(
                    "expires is a date (YYYY-MM-DD), not a date-time",
                ))
            }
        },
    };
    text.parse::<Date>()
        .map_err(|e| serde::de::Error::custom(format!("expires {text:?}: {e}")))
}

/// What applying a baseline did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Findings marked as baselined.
    pub matched: usize,
    /// Entries past their expiry date: each fails the run.
    pub expired: Vec<Entry>,
    /// Entries that matched no finding.
    pub stale: Vec<Entry>,
}

/// Why a baseline file cannot be used: the file, the entry (`finding[i]`, its index
/// among the file's `[[finding]]` tables) where there is one, and what is wrong.
///
/// Its `Display` is the whole message; no `source()`, so an error chain prints each
/// piece once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// The file cannot be read, or is over `MAX_BASELINE_BYTES` (16 MiB).
    #[error("reading baseline {0}")]
    Read(crate::corpus::BoundedReadError),
    /// The file is not UTF-8 text.
    #[error("reading baseline {}: not UTF-8 text", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a baseline's TOML (the error says where).
    #[error("baseline {}: {}", path.display(), error.to_string().trim_end())]
    Format {
        /// The file.
        path: PathBuf,
        /// The TOML reader's error (its line and column).
        error: toml::de::Error,
    },
    /// Entries still have the placeholder reason of a written baseline.
    #[error(
        "baseline {}: {} still {} the placeholder reason {:?}: replace it with why each \
         finding is accepted, or remove the entry: {}",
        path.display(),
        if entries.len() == 1 { "an entry" } else { "entries" },
        if entries.len() == 1 { "has" } else { "have" },
        PLACEHOLDER_REASON,
        unreviewed(entries)
    )]
    Unreviewed {
        /// The file.
        path: PathBuf,
        /// Each entry with its index.
        entries: Vec<(usize, Entry)>,
    },
    /// An entry has an empty reason.
    #[error("baseline {}: finding[{index}] has no reason: say why it is accepted", path.display())]
    NoReason {
        /// The file.
        path: PathBuf,
        /// The entry's index.
        index: usize,
    },
    /// An entry's kind is not a finding kind.
    #[error("baseline {}: finding[{index}]: {kind:?} is not a finding kind", path.display())]
    UnknownKind {
        /// The file.
        path: PathBuf,
        /// The entry's index.
        index: usize,
        /// The kind as written.
        kind: String,
    },
}

impl BaselineError {
    /// The baseline file at fault.
    pub fn path(&self) -> &Path {
        match self {
            BaselineError::Read(e) => e.path(),
            BaselineError::NotUtf8 { path }
            | BaselineError::Format { path, .. }
            | BaselineError::Unreviewed { path, .. }
            | BaselineError::NoReason { path, .. }
            | BaselineError::UnknownKind { path, .. } => path,
        }
    }
}

/// Entries as the message lists them: `finding[i] (contract class location)`, by commas.
fn unreviewed(entries: &[(usize, Entry)]) -> String {
    entries
        .iter()
        .map(|(i, e)| format!("finding[{i}] ({} {} {})", e.contract, e.class, e.location))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Placeholder reason of a written baseline: a reviewer replaces it.
pub const PLACEHOLDER_REASON: &str = "TODO: say why this finding is accepted";

/// The largest baseline file read.
pub const MAX_BASELINE_BYTES: u64 = 16 * 1024 * 1024;

/// Days a written baseline's entries are accepted.
pub const WRITTEN_DAYS: i32 = 90;

impl Baseline {
    /// Read a baseline file.
    ///
    /// # Errors
    ///
    /// [`BaselineError`] naming the file and what is wrong (unreadable, not the format, an
    /// entry without a reason or with an unknown kind).
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let bytes = crate::corpus::read_bounded(
            path,
            MAX_BASELINE_BYTES,
            "a baseline is a reviewed list of findings, at most 16 MiB",
        )
        .map_err(BaselineError::Read)?;
        let file = || path.to_path_buf();
        let text = String::from_utf8(bytes).map_err(|_| BaselineError::NotUtf8 { path: file() })?;
        let baseline: Baseline = toml::from_str(&text).map_err(|error| BaselineError::Format {
            path: file(),
            error,
        })?;
        // A written baseline's placeholder accepts nothing until a person says why: loaded
        // as it is, it would silence every finding for 90 days.
        let unreviewed: Vec<(usize, Entry)> = baseline
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.reason.trim() == PLACEHOLDER_REASON)
            .map(|(i, e)| (i, e.clone()))
            .collect();
        if !unreviewed.is_empty() {
            return Err(BaselineError::Unreviewed {
                path: file(),
                entries: unreviewed,
            });
        }
        for (i, entry) in baseline.entries.iter().enumerate() {
            if entry.reason.trim().is_empty() {
                return Err(BaselineError::NoReason {
                    path: file(),
                    index: i,
                });
            }
            if !FindingKind::ALL.iter().any(|k| k.as_str() == entry.kind) {
                return Err(BaselineError::UnknownKind {
                    path: file(),
                    index: i,
                    kind: entry.kind.clone(),
                });
            }
        }
        Ok(baseline)
    }

    /// Mark the findings of `report` that an unexpired entry matches as baselined; `today`
    /// decides expiry (an entry is accepted through its `expires` day).
    pub fn apply(&self, report: &mut Report, today: Date) -> Applied {
        let mut applied = Applied::default();
        let mut used = BTreeSet::new();
        for contract in &mut report.contracts {
            for finding in &mut contract.findings {
                let location = stable_location(&finding.location);
                let hit = self.entries.iter().enumerate().find(|(_, e)| {
                    e.contract == finding.tool
                        && e.class == finding.class
                        && stable_location(&e.location) == location
                        && e.kind == finding.kind.as_str()
                });
                if let Some((index, entry)) = hit {
                    used.insert(index);
                    if entry.expires >= today {
                        finding.baselined = Some(entry.reason.clone());
                        applied.matched += 1;
                    }
                }
            }
        }
        for (index, entry) in self.entries.iter().enumerate() {
            if entry.expires < today {
                applied.expired.push(entry.clone());
            } else if !used.contains(&index) {
                applied.stale.push(entry.clone());
            }
        }
        applied
    }

    /// A starting baseline holding every finding of `report` (one entry per contract,
    /// class, location and kind), with the placeholder reason and an expiry
    /// [`WRITTEN_DAYS`] after `today`; a finding an entry of `previous` matches keeps that
    /// entry's reason and expiry (a reviewed baseline rewritten loses nothing reviewed,
    /// and an expired entry is not renewed by rewriting it).
    pub fn of(report: &Report, today: Date, previous: Option<&Baseline>) -> Self {
        let expires = today
            .checked_add(airlock_guard::jiff::Span::new().days(WRITTEN_DAYS))
            .unwrap_or(today);
        let mut seen = BTreeSet::new();
        let mut entries = Vec::new();
        for f in report.findings() {
            let location = stable_location(&f.location);
            let key = (f.tool.clone(), f.class.clone(), location.clone(), f.kind);
            if seen.insert(key) {
                let kept = previous.and_then(|p| {
                    p.entries.iter().find(|e| {
                        e.contract == f.tool
                            && e.class == f.class
                            && stable_location(&e.location) == location
                            && e.kind == f.kind.as_str()
                    })
                });
                entries.push(Entry {
                    contract: f.tool.clone(),
                    class: f.class.clone(),
                    location,
                    kind: f.kind.as_str().to_owned(),
                    reason: kept
                        .map_or_else(|| PLACEHOLDER_REASON.to_owned(), |e| e.reason.clone()),
                    expires: kept.map_or(expires, |e| e.expires),
                });
            }
        }
        Self { entries }
    }

    /// The baseline as TOML.
    pub fn to_toml(&self) -> String {
        let header = "# airlock check baseline: accepted findings, matched by contract, class, \
                      location and kind.\n# Every entry needs a reason and an expiry date \
                      (YYYY-MM-DD); an expired entry fails the run.\n\n";
        format!("{header}{}", toml::to_string(self).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::{stable_location, Baseline, BaselineError, PLACEHOLDER_REASON};

    #[test]
    fn locations_are_written_without_what_the_seed_chose() {
        assert_eq!(stable_location("/data/zqa1b2c3d4e5f6g7"), "/data/<canary>");
        assert_eq!(stable_location("byte:1234"), "byte:*");
        assert_eq!(stable_location("byte:"), "byte:");
        assert_eq!(stable_location("/data/byte:12"), "/data/byte:12");
        assert_eq!(stable_location("/data/state"), "/data/state");
    }

    #[test]
    fn a_baseline_load_error_names_the_file_and_the_entries_in_its_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.toml");
        let entry = |location: &str, reason: &str, kind: &str| {
            format!(
                "[[finding]]\ncontract = \"t\"\nclass = \"c\"\nlocation = \"{location}\"\n\
                 kind = \"{kind}\"\nreason = \"{reason}\"\nexpires = 2099-01-01\n"
            )
        };
        let load = |text: String| {
            std::fs::write(&path, text).unwrap();
            Baseline::load(&path).unwrap_err()
        };
        let shown = path.display();
        let e = load(entry("/a", PLACEHOLDER_REASON, "verdict"));
        assert!(matches!(&e, BaselineError::Unreviewed { entries, .. } if entries.len() == 1));
        assert_eq!(e.path(), path);
        assert_eq!(
            e.to_string(),
            format!(
                "baseline {shown}: an entry still has the placeholder reason \
                 {PLACEHOLDER_REASON:?}: replace it with why each finding is accepted, or \
                 remove the entry: finding[0] (t c /a)"
            )
        );
        let e = load(
            entry("/a", PLACEHOLDER_REASON, "verdict") + &entry("/b", PLACEHOLDER_REASON, "leak"),
        );
        assert_eq!(
            e.to_string(),
            format!(
                "baseline {shown}: entries still have the placeholder reason \
                 {PLACEHOLDER_REASON:?}: replace it with why each finding is accepted, or \
                 remove the entry: finding[0] (t c /a), finding[1] (t c /b)"
            )
        );
        let e = load(entry("/a", "known", "verdict") + &entry("/b", " ", "leak"));
        assert!(matches!(e, BaselineError::NoReason { index: 1, .. }));
        assert_eq!(
            e.to_string(),
            format!("baseline {shown}: finding[1] has no reason: say why it is accepted")
        );
        let e = load(entry("/a", "known", "verdicts"));
        assert_eq!(
            e.to_string(),
            format!("baseline {shown}: finding[0]: \"verdicts\" is not a finding kind")
        );
        let e = load("[[finding]]\nnope = 1\n".into());
        assert!(matches!(e, BaselineError::Format { .. }));
        assert!(e.to_string().starts_with(&format!("baseline {shown}: ")));
        std::fs::write(&path, b"\xff").unwrap();
        assert_eq!(
            Baseline::load(&path).unwrap_err().to_string(),
            format!("reading baseline {shown}: not UTF-8 text")
        );
    }
}
