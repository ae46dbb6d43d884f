//! [`UndoLog`]: the before-content of every file a patch replaces, moves or deletes, kept
//! durable outside every workspace until the operation is terminal and verified.
//!
//! The log is a directory beside the ledger file (`<ledger>.undo/`, mode 0700), one
//! subdirectory per operation and one file per planned file that had content before,
//! named by its plan ordinal: `<ledger>.undo/<operation_id>/<ordinal>`. The ledger's plan
//! row with that ordinal says which workspace path the file holds. Each file is written to
//! `<ordinal>.tmp`, fsynced and renamed; then the operation's directory (and, when it was
//! just created, its parent) is fsynced, so a saved entry survives a crash or power loss.
//!
//! An in-memory ledger keeps its log in a private temporary directory the process owns and
//! removes when the [`Store`](crate::Store) is dropped: like the ledger, nothing survives
//! the process.
//!
//! The log never touches a workspace: its paths are the state directory's alone.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::error::StoreError;

/// The undo log of one ledger.
#[derive(Debug)]
pub struct UndoLog {
    dir: PathBuf,
    /// Owns (and on drop removes) the directory of an in-memory ledger's log.
    _temp: Option<TempDir>,
}

impl UndoLog {
    /// The log beside the ledger file `ledger`: `<ledger>.undo`. Nothing is created yet.
    pub(crate) fn beside(ledger: &Path) -> UndoLog {
        let mut dir = ledger.as_os_str().to_owned();
        dir.push(".undo");
        UndoLog { dir: PathBuf::from(dir), _temp: None }
    }

    /// Creates the log's directory now, so it exists (and can be hidden from commands)
    /// before the first patch.
    pub(crate) fn create(&self) -> Result<(), StoreError> {
        if make_private_dir(&self.dir)? {
            sync_parent(&self.dir)?;
        }
        Ok(())
    }

    /// A private temporary log for an in-memory ledger.
    pub(crate) fn temporary() -> Result<UndoLog, StoreError> {
        let temp = tempfile::Builder::new()
            .prefix("codespace-undo-")
            .tempdir()
            .map_err(|source| undo_error(Path::new("codespace-undo-*"), "create", source))?;
        Ok(UndoLog { dir: temp.path().to_owned(), _temp: Some(temp) })
    }

    /// The log's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the before-content of plan row `ordinal` of `operation_id` is kept.
    pub fn entry_path(&self, operation_id: &str, ordinal: usize) -> Result<PathBuf, StoreError> {
        Ok(self.op_dir(operation_id)?.join(ordinal.to_string()))
    }

    /// Makes every `(ordinal, content)` durable before the caller's first write.
    #[expect(
        clippy::disallowed_methods,
        reason = "renames an entry into the ledger's own undo directory, never a workspace path"
    )]
    pub fn save(&self, operation_id: &str, entries: &[(usize, &[u8])]) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        let op_dir = self.op_dir(operation_id)?;
        if make_private_dir(&self.dir)? {
            sync_parent(&self.dir)?;
        }
        let created = make_private_dir(&op_dir)?;
        for (ordinal, bytes) in entries {
            let path = op_dir.join(ordinal.to_string());
            let temp = op_dir.join(format!("{ordinal}.tmp"));
            write_synced(&temp, bytes)?;
            fs::rename(&temp, &path).map_err(|source| undo_error(&path, "rename", source))?;
        }
        sync_dir(&op_dir)?;
        if created {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }

    /// The kept content of plan row `ordinal`, or `None` when the log has none.
    #[expect(
        clippy::disallowed_methods,
        reason = "opens an entry of the ledger's own undo directory, never a workspace path"
    )]
    pub fn load(&self, operation_id: &str, ordinal: usize) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.entry_path(operation_id, ordinal)?;
        let file = match OpenOptions::new().read(true).custom_flags(nofollow()).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(undo_error(&path, "open", source)),
        };
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut &file, &mut bytes)
            .map_err(|source| undo_error(&path, "read", source))?;
        Ok(Some(bytes))
    }

    /// Removes every entry of `operation_id` whose ordinal is not in `keep`, and its
    /// directory once empty. Called only when the operation is terminal and verified.
    #[expect(
        clippy::disallowed_methods,
        reason = "removes entries of the ledger's own undo directory, never a workspace path"
    )]
    pub fn discard(&self, operation_id: &str, keep: &[usize]) -> Result<(), StoreError> {
        let op_dir = self.op_dir(operation_id)?;
        let entries = match fs::read_dir(&op_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(undo_error(&op_dir, "list", source)),
        };
        let mut left = 0usize;
        for entry in entries {
            let entry = entry.map_err(|source| undo_error(&op_dir, "list", source))?;
            let name = entry.file_name();
            let ordinal = name.to_str().and_then(|n| n.parse::<usize>().ok());
            if ordinal.is_some_and(|o| keep.contains(&o)) {
                left += 1;
                continue;
            }
            let path = entry.path();
            fs::remove_file(&path).map_err(|source| undo_error(&path, "remove", source))?;
        }
        if left == 0 {
            fs::remove_dir(&op_dir).map_err(|source| undo_error(&op_dir, "remove", source))?;
            sync_dir(&self.dir)?;
        } else {
            sync_dir(&op_dir)?;
        }
        Ok(())
    }

    /// Bytes the log keeps for `operation_id` (0 when it keeps nothing, or the id is not
    /// one the log could hold).
    #[expect(
        clippy::disallowed_methods,
        reason = "lists the ledger's own undo directory, never a workspace path"
    )]
    pub fn bytes(&self, operation_id: &str) -> Result<u64, StoreError> {
        if !is_operation_id(operation_id) {
            return Ok(0);
        }
        let op_dir = self.dir.join(operation_id);
        let entries = match fs::read_dir(&op_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(source) => return Err(undo_error(&op_dir, "list", source)),
        };
        let mut total = 0u64;
        for entry in entries {
            let entry = entry.map_err(|source| undo_error(&op_dir, "list", source))?;
            let meta = entry.metadata().map_err(|source| undo_error(&op_dir, "inspect", source))?;
            if meta.is_file() {
                total = total.saturating_add(meta.len());
            }
        }
        Ok(total)
    }

    /// The operations that have a directory in the log, in name order.
    #[expect(
        clippy::disallowed_methods,
        reason = "lists the ledger's own undo directory, never a workspace path"
    )]
    pub fn operations(&self) -> Result<Vec<String>, StoreError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
            Err(source) => return Err(undo_error(&self.dir, "list", source)),
        };
        let mut ops = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| undo_error(&self.dir, "list", source))?;
            if let Some(name) = entry.file_name().to_str().filter(|n| is_operation_id(n)) {
                ops.push(name.to_owned());
            }
        }
        ops.sort();
        Ok(ops)
    }

    fn op_dir(&self, operation_id: &str) -> Result<PathBuf, StoreError> {
        if !is_operation_id(operation_id) {
            return Err(StoreError::InvalidInput {
                reason: format!("{operation_id:?} is not an operation id (op-<uuid>)"),
            });
        }
        Ok(self.dir.join(operation_id))
    }
}

/// `op-` and a UUID's characters: the only names the log creates, so a name from the
/// command line can never leave the log's directory.
fn is_operation_id(name: &str) -> bool {
    name.len() <= 64
        && name.strip_prefix("op-").is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
        })
}

fn nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// Creates `dir` with mode 0700; `Ok(true)` when it was created now. An existing symlink
/// or non-directory is refused.
#[expect(
    clippy::disallowed_methods,
    reason = "creates a directory of the ledger's own undo log, never a workspace path"
)]
fn make_private_dir(dir: &Path) -> Result<bool, StoreError> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let meta =
                fs::symlink_metadata(dir).map_err(|source| undo_error(dir, "inspect", source))?;
            if meta.is_dir() {
                Ok(false)
            } else {
                Err(undo_error(dir, "inspect", io::Error::other("exists and is not a directory")))
            }
        }
        Err(source) => Err(undo_error(dir, "create", source)),
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "writes an entry of the ledger's own undo log, never a workspace path"
)]
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(nofollow())
        .open(path)
        .map_err(|source| undo_error(path, "create", source))?;
    file.write_all(bytes).map_err(|source| undo_error(path, "write", source))?;
    file.sync_all().map_err(|source| undo_error(path, "fsync", source))
}

#[expect(
    clippy::disallowed_methods,
    reason = "fsyncs a directory of the ledger's own undo log, never a workspace path"
)]
fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|source| undo_error(dir, "fsync", source))
}

fn sync_parent(dir: &Path) -> Result<(), StoreError> {
    match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => sync_dir(parent),
        None => Ok(()),
    }
}

fn undo_error(path: &Path, op: &'static str, source: io::Error) -> StoreError {
    StoreError::Undo { path: path.to_owned(), op, source }
}

#[cfg(test)]
mod tests;
