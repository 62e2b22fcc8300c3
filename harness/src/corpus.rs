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

/// A corpus that cannot be used: where, and why.
#[derive(Debug)]
#[non_exhaustive]
pub enum CorpusError {
    /// No corpus folder at any of the places looked at.
    NotFound {
        /// The folders tried, in order.
        tried: Vec<PathBuf>,
    },
    /// A file or folder of the corpus cannot be read.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A file or folder is not what the corpus layout requires.
    Invalid {
        /// The file or folder at fault.
        path: PathBuf,
        /// What is wrong, and what to do.
        reason: String,
    },
}

impl CorpusError {
    /// The file or folder at fault (the first folder tried, for [`CorpusError::NotFound`]).
    pub fn path(&self) -> &Path {
        match self {
            CorpusError::NotFound { tried } => tried.first().map_or(Path::new(""), |p| p),
            CorpusError::Io { path, .. } | CorpusError::Invalid { path, .. } => path,
        }
    }
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorpusError::NotFound { tried } => {
                let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "no corpus folder (tried {}): put request.json and the fixtures in \
                     corpora/<tool> beside schemas/<tool>, or name the folder with --corpus DIR",
                    tried.join(", ")
                )
            }
            CorpusError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            CorpusError::Invalid { path, reason } => write!(f, "{}: {reason}", path.display()),
        }
    }
}

// The message holds the whole chain (the variants keep their cause as data): no
// `source()`, so an error chain prints each piece once.
impl std::error::Error for CorpusError {}

fn error(path: &Path, reason: impl fmt::Display) -> CorpusError {
    CorpusError::Invalid {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn io_error(path: &Path, source: std::io::Error) -> CorpusError {
    CorpusError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The largest request file read.
pub const MAX_REQUEST_BYTES: u64 = 16 * 1024 * 1024;

/// The largest file read as one case: a fixture, a reproducer (`check --replay`), a fuzz
/// input (`fuzz --replay`). A body is judged against at most `max_bytes + 1` of its bytes,
/// and `max_bytes` is at most [`airlock_guard::MAX_BYTES_CEILING`] (64 MiB), so twice that
/// holds the largest body that tests anything, base64-encoded in a reproducer too; a larger
/// file, or an endless one (`/dev/zero`), is an error naming it, never read whole.
pub const MAX_CASE_FILE_BYTES: u64 = 2 * airlock_guard::MAX_BYTES_CEILING;

/// Read a file a user named, at most `limit` bytes: a longer file (or an endless device
/// such as `/dev/zero`, whose size its metadata does not tell) is an error naming it,
/// never read whole.
///
/// # Errors
///
/// [`BoundedReadError`]: the file cannot be read, or holds more than `limit` bytes
/// (`what` says what it should be).
pub fn read_bounded(
    path: &Path,
    limit: u64,
    what: &'static str,
) -> Result<Vec<u8>, BoundedReadError> {
    match read_at_most(path, limit) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(BoundedReadError::TooLarge {
            path: path.to_path_buf(),
            limit,
            what,
        }),
        Err(error) => Err(BoundedReadError::Io {
            path: path.to_path_buf(),
            error,
        }),
    }
}

/// A file a user named that [`read_bounded`] could not read: which, and why.
///
/// Its `Display` is the whole message; no `source()`, so an error chain prints each
/// piece once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BoundedReadError {
    /// The file cannot be read.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        error: std::io::Error,
    },
    /// The file holds more than the bound.
    #[error("{}: larger than {limit} bytes: {what}", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound, in bytes.
        limit: u64,
        /// What the file should be (`a baseline is a reviewed list of findings, …`).
        what: &'static str,
    },
}

impl BoundedReadError {
    /// The file at fault.
    pub fn path(&self) -> &Path {
        match self {
            BoundedReadError::Io { path, .. } | BoundedReadError::TooLarge { path, .. } => path,
        }
    }
}

/// The bytes of `path` when it holds at most `limit` of them; `None` when it holds more.
fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    match airlock_guard::read_limited(std::fs::File::open(path)?, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(airlock_guard::ReadError::TooLarge { .. }) => Ok(None),
        Err(airlock_guard::ReadError::Io(e)) => Err(e),
    }
}

/// The names a corpus folder may hold (hidden files aside). `review/` holds recorded
/// answers the contract refused (`airlock mcp proxy --record`), waiting for a person to
/// move each into `accepted/` or `near_miss/`: nothing in it is run.
pub const CORPUS_ENTRIES: [&str; 5] = [
    "request.json",
    "accepted",
    "near_miss",
    "historical",
    "review",
];

/// The corpus folder of the contract in `contract_dir`: `<root>/corpora/<tool>` for a
/// contract in `<root>/schemas/<tool>`; `None` when the tool's name is not one plain
/// file-name component (it would point outside `corpora/`).
pub fn corpus_dir(contract: &Contract) -> Option<PathBuf> {
    let dir = contract.dir()?;
    let root = dir.parent()?.parent()?;
    let tool = contract.tool();
    (crate::cases::file_component(tool) == tool).then(|| root.join("corpora").join(tool))
}

/// The corpus of the contract in `contract_dir`: `corpus` when given (`--corpus DIR`),
/// else the folder [`corpus_dir`] names. Not found is an error naming what was tried.
///
/// # Errors
///
/// When no corpus folder is there, or it does not load.
pub fn find_corpus(contract: &Contract, corpus: Option<&Path>) -> Result<Corpus, CorpusError> {
    let dir = match corpus {
        Some(dir) => dir.to_path_buf(),
        None => corpus_dir(contract).ok_or_else(|| CorpusError::Invalid {
            path: contract.dir().map(Path::to_path_buf).unwrap_or_default(),
            reason: "no corpus folder can be derived from this contract's folder \
                     (corpora/<tool> beside schemas/<tool>): name it with --corpus DIR"
                .into(),
        })?,
    };
    Corpus::load(&dir)
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
    let bytes = read_at_most(path, MAX_REQUEST_BYTES)
        .map_err(|e| io_error(path, e))?
        .ok_or_else(|| {
            error(
                path,
                format!("larger than {MAX_REQUEST_BYTES} bytes: a request is a call's id, params and time"),
            )
        })?;
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
            return Err(CorpusError::NotFound {
                tried: vec![dir.to_path_buf()],
            });
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
    let bytes = read_at_most(&expect_path, MAX_REQUEST_BYTES)
        .map_err(|e| io_error(&expect_path, e))?
        .ok_or_else(|| {
            error(
                &expect_path,
                format!("larger than {MAX_REQUEST_BYTES} bytes: it lists the fixtures beside it"),
            )
        })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        io_error(
            &expect_path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
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
    let bytes = read_at_most(path, MAX_CASE_FILE_BYTES)
        .map_err(|e| io_error(path, e))?
        .ok_or_else(|| {
            error(
                path,
                format!(
                    "larger than {MAX_CASE_FILE_BYTES} bytes: a fixture is one response \
                     body, and the guard reads at most 64 MiB of one"
                ),
            )
        })?;
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
        .map_err(|e| io_error(dir, e))?
        .map(|entry| entry.map(|e| e.path()).map_err(|e| io_error(dir, e)))
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
