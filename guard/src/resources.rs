//! The documents a schema's references may reach: in memory, or a contract's folder read
//! lazily. Only a file a reference names is read, once, by a plain file name; it must be a
//! regular file (a symbolic link is refused, never followed) holding strict JSON.

use serde_json::Value;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::limits::MAX_CONTRACT_FILE_BYTES;
use crate::names::is_plain_name;
use crate::parse::parse;

/// Why a file of a contract folder cannot be a resource. The reason never quotes the
/// file's contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub(crate) struct ResourceError {
    pub(crate) path: PathBuf,
    pub(crate) reason: String,
}

const SYMLINK: &str = "is a symbolic link; a contract's files must be regular files inside \
                       its folder (copy the file in instead of linking to it)";
const NOT_REGULAR: &str =
    "is not a regular file; a contract's files must be regular files inside its folder";
const TOO_LARGE: &str = "is larger than 32 MiB (MAX_CONTRACT_FILE_BYTES), the most a \
                         contract's file may hold";

/// Read `path` if it is a regular file of at most [`MAX_CONTRACT_FILE_BYTES`]. A symbolic
/// link is refused without being followed, and so is anything else that is not a plain
/// file. The type is checked before the file is opened (opening a device can act on it)
/// and again on the open file, and the open itself refuses a link: a link swapped in
/// between the two is not followed.
pub(crate) fn read_regular(path: &Path) -> Result<Vec<u8>, ReadRegularError> {
    let metadata = std::fs::symlink_metadata(path).map_err(ReadRegularError::Io)?;
    if metadata.file_type().is_symlink() {
        return Err(ReadRegularError::NotRegular(SYMLINK));
    }
    if !metadata.is_file() {
        return Err(ReadRegularError::NotRegular(NOT_REGULAR));
    }
    let file = open_no_follow(path)?;
    let metadata = file.metadata().map_err(ReadRegularError::Io)?;
    if !metadata.is_file() {
        return Err(ReadRegularError::NotRegular(NOT_REGULAR));
    }
    if metadata.len() > MAX_CONTRACT_FILE_BYTES {
        return Err(ReadRegularError::NotRegular(TOO_LARGE));
    }
    // The length read above is a hint: a file that grows while it is read stops one byte
    // past the bound.
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(MAX_CONTRACT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadRegularError::Io)?;
    if bytes.len() as u64 > MAX_CONTRACT_FILE_BYTES {
        return Err(ReadRegularError::NotRegular(TOO_LARGE));
    }
    Ok(bytes)
}

/// Open `path` for reading without following a symbolic link in its place (`O_NOFOLLOW`),
/// without blocking on a FIFO (`O_NONBLOCK`) and without taking a terminal as the
/// process's own (`O_NOCTTY`).
#[cfg(unix)]
fn open_no_follow(path: &Path) -> Result<File, ReadRegularError> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    match rustix::fs::open(path, flags | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => Ok(File::from(fd)),
        // ELOOP on Linux, EMLINK on some BSDs: ask the file system what is there.
        Err(_) if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) => {
            Err(ReadRegularError::NotRegular(SYMLINK))
        }
        Err(errno) => Err(ReadRegularError::Io(errno.into())),
    }
}

/// Elsewhere the check before the open is all there is.
#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> Result<File, ReadRegularError> {
    File::open(path).map_err(ReadRegularError::Io)
}

/// Why [`read_regular`] failed.
#[derive(Debug)]
pub(crate) enum ReadRegularError {
    /// Missing or unreadable.
    Io(std::io::Error),
    /// A link, a folder, a device: refused, with the reason.
    NotRegular(&'static str),
}

/// Schema documents a schema may reference, by absolute URI (no fragment). Everything
/// else is refused: there is no network access, and the only files read are those of one
/// folder that a reference names.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    by_uri: Arc<HashMap<String, Value>>,
    folder: Option<Arc<Folder>>,
    /// What is resolved, for the error of a refused reference (`None`: the contract's own
    /// schema files).
    scope: Option<&'static str>,
}

/// A folder whose `*.json` files are served by name under its base URIs, read on first use.
#[derive(Debug)]
struct Folder {
    dir: PathBuf,
    max_depth: usize,
    state: Mutex<FolderState>,
}

#[derive(Debug, Default)]
struct FolderState {
    /// URI prefixes (each ending in `/`) under which the folder's files are served: the
    /// folder's base URI and the `$id` directory of every document read from it.
    bases: Vec<String>,
    /// Every file name looked up so far: its document, or `None` when there is no such file.
    files: HashMap<String, Option<Arc<Value>>>,
    /// The first file that could not be a resource.
    failure: Option<ResourceError>,
}

impl Resources {
    /// No resources: only the schema itself can be referenced.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `*.json` files of `dir`, served by file name under `base` (a URI ending in `/`)
    /// and beside the `$id` of every document read, each file read when a reference first
    /// names it. Files are parsed strictly, at most `max_depth` deep.
    pub fn folder(dir: impl Into<PathBuf>, base: &str, max_depth: usize) -> Self {
        Self {
            by_uri: Arc::default(),
            scope: None,
            folder: Some(Arc::new(Folder {
                dir: dir.into(),
                max_depth,
                state: Mutex::new(FolderState {
                    bases: vec![base.to_owned()],
                    ..FolderState::default()
                }),
            })),
        }
    }

    /// Name what is resolved in the error of a refused reference ("only {scope} are
    /// resolved"; default: "the contract's own schema files").
    #[must_use]
    pub fn scope(mut self, scope: &'static str) -> Self {
        self.scope = Some(scope);
        self
    }

    /// The document held in memory at `uri` (fragment ignored); files of a folder are not
    /// read by this.
    pub fn get(&self, uri: &str) -> Option<&Value> {
        self.by_uri.get(without_fragment(uri))
    }

    /// Serve `document` at `uri`.
    pub fn insert(&mut self, uri: impl Into<String>, document: Value) {
        let uri: String = uri.into();
        Arc::make_mut(&mut self.by_uri).insert(without_fragment(&uri).to_owned(), document);
    }

    /// Serve the folder's files beside the `$id` of `document` too (the schema being
    /// compiled: its relative references resolve against its `$id`).
    pub(crate) fn note_id(&self, document: &Value) {
        if let (Some(folder), Some(base)) = (&self.folder, id_directory(document)) {
            folder.state().add_base(base);
        }
    }

    /// The document at `uri`: in memory, or the folder's file the URI names.
    ///
    /// # Errors
    ///
    /// The file the URI names and the reason, when that file cannot be a resource.
    pub(crate) fn fetch(&self, uri: &str) -> Result<Option<Value>, ResourceError> {
        let key = without_fragment(uri);
        if let Some(document) = self.by_uri.get(key) {
            return Ok(Some(document.clone()));
        }
        match &self.folder {
            Some(folder) => folder.fetch(key),
            None => Ok(None),
        }
    }

    /// The first folder file that could not be a resource, if any.
    pub(crate) fn failure(&self) -> Option<ResourceError> {
        self.folder.as_ref().and_then(|f| f.state().failure.clone())
    }
}

impl Folder {
    fn state(&self) -> std::sync::MutexGuard<'_, FolderState> {
        // The state is a cache; a panic elsewhere while it was held leaves it consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fetch(&self, key: &str) -> Result<Option<Value>, ResourceError> {
        let Some(slash) = key.rfind('/') else {
            return Ok(None);
        };
        let (prefix, name) = key.split_at(slash + 1);
        // Only a plain `*.json` name is ever joined onto the folder.
        if !is_plain_name(name) || !name.ends_with(".json") {
            return Ok(None);
        }
        let document = self.file(name)?;
        let Some(document) = document else {
            return Ok(None);
        };
        let served_here = self.state().bases.iter().any(|b| b == prefix)
            || document
                .get("$id")
                .and_then(Value::as_str)
                .is_some_and(|id| without_fragment(id) == key);
        Ok(served_here.then(|| Value::clone(&document)))
    }

    /// The document of file `name`, read and parsed on first use.
    fn file(&self, name: &str) -> Result<Option<Arc<Value>>, ResourceError> {
        if let Some(known) = self.state().files.get(name) {
            return Ok(known.clone());
        }
        let path = self.dir.join(name);
        let refuse = |reason: String| {
            let error = ResourceError {
                path: path.clone(),
                reason,
            };
            self.state().failure.get_or_insert_with(|| error.clone());
            error
        };
        let bytes = match read_regular(&path) {
            Ok(bytes) => bytes,
            Err(ReadRegularError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                self.state().files.insert(name.to_owned(), None);
                return Ok(None);
            }
            Err(ReadRegularError::Io(e)) => return Err(refuse(format!("cannot be read: {e}"))),
            Err(ReadRegularError::NotRegular(reason)) => return Err(refuse(reason.to_owned())),
        };
        // The masked message: a file that is not a valid resource is never quoted.
        let document = parse(&bytes, self.max_depth)
            .map_err(|e| refuse(format!("not strict JSON: {}", e.masked_message())))?;
        let document = Arc::new(document);
        let mut state = self.state();
        if let Some(base) = id_directory(&document) {
            state.add_base(base);
        }
        state
            .files
            .insert(name.to_owned(), Some(Arc::clone(&document)));
        Ok(Some(document))
    }
}

impl FolderState {
    fn add_base(&mut self, base: String) {
        if !self.bases.contains(&base) {
            self.bases.push(base);
        }
    }
}

fn without_fragment(uri: &str) -> &str {
    uri.split('#').next().unwrap_or_default()
}

/// The directory part of a document's `$id` (up to and including the last `/`).
fn id_directory(document: &Value) -> Option<String> {
    let id = without_fragment(document.get("$id")?.as_str()?);
    id.rfind('/').map(|slash| id[..=slash].to_owned())
}

/// Resolves references for `jsonschema` from [`Resources`] only.
pub(crate) struct LocalRetriever(pub(crate) Resources);

impl jsonschema::Retrieve for LocalRetriever {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let text = uri.as_str();
        match self.0.fetch(text) {
            Ok(Some(document)) => Ok(document),
            Ok(None) => Err(format!(
                "reference to {text} refused: only {} are resolved",
                self.0.scope.unwrap_or("the contract's own schema files")
            )
            .into()),
            Err(error) => Err(error.to_string().into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_the_mcp_tool_name_alphabet_without_dot_and_dot_dot() {
        for good in [
            "review_status",
            "a",
            "v1.schema.json",
            "A-b.c_9",
            &"x".repeat(128),
        ] {
            assert!(is_plain_name(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "/etc",
            "../x",
            "a/b",
            "a\\b",
            "a b",
            "é",
            &"x".repeat(129),
        ] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }

    /// The open itself refuses a link: a link swapped in after the check before it (which
    /// sees a regular file) is still not followed.
    #[cfg(unix)]
    #[test]
    fn the_open_refuses_a_link_in_the_files_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("outside.json");
        std::fs::write(&target, b"{}").unwrap();
        let link = dir.path().join("common.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        match open_no_follow(&link) {
            Err(ReadRegularError::NotRegular(reason)) => assert_eq!(reason, SYMLINK),
            other => panic!("the link was opened: {other:?}"),
        }
        assert!(open_no_follow(&target).is_ok());
    }

    /// A FIFO swapped in after the check does not block the open; its type is refused on
    /// the open file. (rustix has no `mknodat` on Apple systems.)
    #[cfg(all(unix, not(target_vendor = "apple")))]
    #[test]
    fn the_open_does_not_wait_for_a_fifos_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("common.json");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        let file = open_no_follow(&fifo).unwrap();
        assert!(!file.metadata().unwrap().is_file());
        // And the whole read refuses it by type.
        assert!(matches!(
            read_regular(&fifo),
            Err(ReadRegularError::NotRegular(NOT_REGULAR))
        ));
    }
}
