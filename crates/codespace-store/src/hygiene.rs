//! Open-time checks of the ledger's location and files (security case D6).
//!
//! Before SQLite sees the path, the ledger is refused when:
//! - the path (or its `-wal`/`-shm` sidecar) is a symlink or not a regular file;
//! - it lies on a network filesystem (SQLite's locking and WAL shared memory are not
//!   reliable there);
//! - the database is missing or empty while a non-empty `-wal` lies beside it: the
//!   database was copied or moved without its WAL, or the WAL without its database, and
//!   opening would silently lose or misapply the committed transactions it holds.
//!
//! Missing parent directories are created `0700`; the database file is created (or
//! tightened to) `0600`, and SQLite creates its sidecars with the database file's mode.
//! Integrity (`PRAGMA integrity_check`) is checked by the store once SQLite has opened it.

use std::fs::{self, DirBuilder, File, Metadata, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;

use crate::error::StoreError;

/// Filesystem magic numbers (`statfs.f_type`, low 32 bits) of network and cluster
/// filesystems, with a name for the refusal message.
const NETWORK_FILESYSTEMS: [(u32, &str); 10] = [
    (0x6969, "NFS"),
    (0x517B, "SMB"),
    (0xFF53_4D42, "CIFS"),
    (0xFE53_4D42, "SMB2"),
    (0x0102_1997, "9P"),
    (0x5346_414F, "AFS"),
    (0x6B41_4653, "kAFS"),
    (0x00C3_6400, "Ceph"),
    (0x7375_7245, "Coda"),
    (0x0BD0_0BD0, "Lustre"),
];

/// The name of the network filesystem with this `statfs` magic, or `None` for a local one.
///
/// Takes the raw `f_type` widened to `u64`; only its low 32 bits are compared, so a magic
/// that a 32-bit `f_type` sign-extended still matches.
pub(crate) fn network_filesystem(f_type: u64) -> Option<&'static str> {
    let magic = (f_type & 0xFFFF_FFFF) as u32;
    NETWORK_FILESYSTEMS.iter().find(|(known, _)| *known == magic).map(|(_, name)| *name)
}

/// The path of a sidecar file: `<path>-wal`, `<path>-shm`.
pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `lstat`, with a missing file as `None`.
#[expect(
    clippy::disallowed_methods,
    reason = "`lstat` of the ledger's own file and sidecars, never a workspace path"
)]
fn lstat(path: &Path) -> io::Result<Option<Metadata>> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Runs every pre-open check and creates the directory and the `0600` database file.
#[expect(
    clippy::disallowed_methods,
    reason = "creates the ledger's own private directory, never a workspace path"
)]
pub(crate) fn prepare(path: &Path) -> Result<(), StoreError> {
    let refuse = |reason: String| StoreError::Refused { path: path.to_owned(), reason };
    let io_error = |source: io::Error| StoreError::Open { path: path.to_owned(), source };

    if path.as_os_str().is_empty() {
        return Err(refuse("the path is empty".to_owned()));
    }
    if path.as_os_str() == ":memory:" {
        return Err(refuse("`:memory:` is not a file; use an in-memory ledger instead".to_owned()));
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    DirBuilder::new().recursive(true).mode(0o700).create(parent).map_err(io_error)?;
    let stats = rustix::fs::statfs(parent).map_err(|e| io_error(e.into()))?;
    refuse_network(stats.f_type as u64, "its directory").map_err(refuse)?;

    let main = lstat(path).map_err(io_error)?;
    check_regular(main.as_ref(), "the database path").map_err(refuse)?;
    let mut wal_len = 0;
    for suffix in ["-wal", "-shm"] {
        let side = sidecar(path, suffix);
        let meta = lstat(&side).map_err(io_error)?;
        check_regular(meta.as_ref(), &format!("its {suffix} file")).map_err(refuse)?;
        if suffix == "-wal" {
            wal_len = meta.map_or(0, |m| m.len());
        }
    }
    let main_len = main.map_or(0, |m| m.len());
    if main_len == 0 && wal_len > 0 {
        return Err(refuse(format!(
            "the database is missing or empty but its write-ahead log {} holds {wal_len} bytes: \
             the database was moved or copied without its WAL (or the WAL without its database); \
             restore the two files together, or move the stray -wal file away",
            sidecar(path, "-wal").display()
        )));
    }

    let file = create_private(path).map_err(|error| {
        if error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
            refuse("the database path is a symlink; give the real path".to_owned())
        } else {
            io_error(error)
        }
    })?;
    let meta = file.metadata().map_err(io_error)?;
    if !meta.is_file() {
        return Err(refuse("the database path is not a regular file".to_owned()));
    }
    let stats = rustix::fs::fstatfs(&file).map_err(|e| io_error(e.into()))?;
    refuse_network(stats.f_type as u64, "the database file").map_err(refuse)?;
    if meta.permissions().mode() & 0o7777 != 0o600 {
        file.set_permissions(Permissions::from_mode(0o600)).map_err(io_error)?;
    }
    Ok(())
}

/// Opens or creates the database file without following a symlink, mode `0600`.
#[expect(
    clippy::disallowed_methods,
    reason = "creates the ledger's own database file, never a workspace path"
)]
fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

fn refuse_network(f_type: u64, what: &str) -> Result<(), String> {
    match network_filesystem(f_type) {
        Some(name) => Err(format!(
            "{what} is on a network filesystem ({name}); SQLite's locking and WAL are not reliable \
             there, so put the ledger on a local disk"
        )),
        None => Ok(()),
    }
}

/// A present file must be a regular file, never a symlink.
fn check_regular(meta: Option<&Metadata>, what: &str) -> Result<(), String> {
    match meta {
        None => Ok(()),
        Some(meta) if meta.file_type().is_symlink() => {
            Err(format!("{what} is a symlink; give the real path"))
        }
        Some(meta) if !meta.is_file() => Err(format!("{what} is not a regular file")),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests;
