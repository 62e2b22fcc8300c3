//! The fixtures of a contract, read as raw bytes: `accepted/`, `near_miss/`,
//! `historical/<version>/` with `expect.toml`, the default `request.json` and per-fixture
//! `NAME.request.json` overrides. Loading never writes and never panics.

use airlock_guard::{Contract, Request};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// What a fixture is expected to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FixtureKind {
    /// Must be admitted.
    Accepted,
    /// Must be rejected.
    NearMiss,
    /// An earlier version's shape, with its verdict now from `expect.toml`.
    Historical {
        /// The version folder it came from.
        version: u32,
    },
}

impl fmt::Display for FixtureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixtureKind::Accepted => f.write_str("accepted"),
            FixtureKind::NearMiss => f.write_str("near_miss"),
            FixtureKind::Historical { version } => write!(f, "historical/{version}"),
        }
    }
}

/// The verdict a fixture expects under the current contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// Admitted (a success, or a valid failure envelope).
    Accept,
    /// Rejected with the fixed failure.
    Reject,
}

/// One fixture file.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Which folder it came from.
    pub kind: FixtureKind,
    /// Its file.
    pub path: PathBuf,
    /// Its name without `.json`.
    pub name: String,
    /// The raw bytes, exactly as on disk.
    pub bytes: Vec<u8>,
    /// The request it answers (the override beside it, or the default).
    pub request: Request,
    /// Whether the contract must admit it.
    pub expect: Expect,
}

/// A contract's corpus.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The corpus folder (`corpora/<tool>`).
    pub dir: PathBuf,
    /// The default request.
    pub request: Request,
    /// Every fixture, sorted by kind then name.
    pub fixtures: Vec<Fixture>,
}

/// A corpus that cannot be read: the file and the reason.
#[derive(Debug)]
pub struct CorpusError {
    /// The file or folder at fault.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for CorpusError {}

fn error(path: &Path, message: impl fmt::Display) -> CorpusError {
    CorpusError {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// The names a corpus folder may hold (hidden files aside).
pub const CORPUS_ENTRIES: [&str; 4] = ["request.json", "accepted", "near_miss", "historical"];

/// The corpus folder of the contract in `contract_dir`: `<root>/corpora/<tool>` for a
/// contract in `<root>/schemas/<tool>`; `None` when the tool's name is not one plain
/// file-name component (it would point outside `corpora/`).
pub fn corpus_dir(contract: &Contract) -> Option<PathBuf> {
    let dir = contract.dir()?;
    let root = dir.parent()?.parent()?;
    let tool = contract.tool();
    (crate::cases::file_component(tool) == tool).then(|| root.join("corpora").join(tool))
}

/// A fixture's name: its file name without `.json`.
pub fn fixture_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .trim_end_matches(".json")
        .to_owned()
}

/// Read a request file.
///
/// # Errors
///
/// When it cannot be read or is not a request.
pub fn read_request(path: &Path) -> Result<Request, CorpusError> {
    let bytes = std::fs::read(path).map_err(|e| error(path, e))?;
    Request::from_json(&bytes).map_err(|e| error(path, format!("not a request: {e}")))
}

impl Corpus {
    /// Load the corpus of `contract` from `dir`.
    ///
    /// # Errors
    ///
    /// A missing `request.json`, an entry of the folder that is none of
    /// [`CORPUS_ENTRIES`] (a misnamed `acceptd/` would otherwise be skipped silently), an
    /// unreadable fixture, a bad override, or an `expect.toml` that does not list exactly
    /// the files beside it.
    pub fn load(dir: &Path) -> Result<Self, CorpusError> {
        if !dir.is_dir() {
            return Err(error(dir, "corpus folder not found"));
        }
        for entry in sorted_entries(dir)? {
            let name = entry.file_name().unwrap_or_default().to_string_lossy();
            // Hidden files (`.gitkeep`, `.DS_Store`) are nobody's fixtures.
            if !name.starts_with('.') && !CORPUS_ENTRIES.contains(&name.as_ref()) {
                return Err(error(
                    &entry,
                    format!(
                        "unknown entry {name:?} in the corpus folder: expected only {} (rename or remove it)",
                        CORPUS_ENTRIES.join(", ")
                    ),
                ));
            }
        }
        let request = read_request(&dir.join("request.json"))?;
        let mut fixtures = Vec::new();
        for (sub, kind, expect) in [
            ("accepted", FixtureKind::Accepted, Expect::Accept),
            ("near_miss", FixtureKind::NearMiss, Expect::Reject),
        ] {
            let folder = dir.join(sub);
            if folder.is_dir() {
                for path in fixture_files(&folder)? {
                    fixtures.push(fixture(&path, kind, expect, &request)?);
                }
            }
        }
        let historical = dir.join("historical");
        if historical.is_dir() {
            for entry in sorted_entries(&historical)? {
                if !entry.is_dir() {
                    continue;
                }
                let name = entry.file_name().unwrap_or_default().to_string_lossy();
                let version: u32 = name
                    .parse()
                    .map_err(|_| error(&entry, "historical folders are named by version number"))?;
                fixtures.extend(historical_fixtures(&entry, version, &request)?);
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            request,
            fixtures,
        })
    }
}

fn historical_fixtures(
    dir: &Path,
    version: u32,
    request: &Request,
) -> Result<Vec<Fixture>, CorpusError> {
    let expect_path = dir.join("expect.toml");
    let text = std::fs::read_to_string(&expect_path).map_err(|e| error(&expect_path, e))?;
    let mut expect: BTreeMap<String, Expect> =
        toml::from_str(&text).map_err(|e| error(&expect_path, e.to_string().trim_end()))?;
    let mut out = Vec::new();
    for path in fixture_files(dir)? {
        let file = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let verdict = expect
            .remove(&file)
            .ok_or_else(|| error(&expect_path, format!("no verdict for {file:?}")))?;
        out.push(fixture(
            &path,
            FixtureKind::Historical { version },
            verdict,
            request,
        )?);
    }
    if let Some(missing) = expect.keys().next() {
        return Err(error(
            &expect_path,
            format!("lists {missing:?}, which does not exist"),
        ));
    }
    Ok(out)
}

fn fixture(
    path: &Path,
    kind: FixtureKind,
    expect: Expect,
    default: &Request,
) -> Result<Fixture, CorpusError> {
    let bytes = std::fs::read(path).map_err(|e| error(path, e))?;
    let name = fixture_name(path);
    let override_path = path.with_file_name(format!("{name}.request.json"));
    let request = if override_path.exists() {
        read_request(&override_path)?
    } else {
        default.clone()
    };
    Ok(Fixture {
        kind,
        path: path.to_path_buf(),
        name,
        bytes,
        request,
        expect,
    })
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| error(dir, e))?
        .map(|entry| entry.map(|e| e.path()).map_err(|e| error(dir, e)))
        .collect::<Result<Vec<_>, _>>()?;
    entries.sort();
    Ok(entries)
}

/// `*.json` files of a folder except `*.request.json` overrides, sorted.
fn fixture_files(dir: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    Ok(sorted_entries(dir)?
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            p.is_file() && name.ends_with(".json") && !name.ends_with(".request.json")
        })
        .collect())
}
