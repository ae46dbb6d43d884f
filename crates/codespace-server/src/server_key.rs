//! The server's key (`codespace_types::ServerKey`) in the state directory: `server-key`,
//! 64 hex digits, mode 0600, generated once by the first server that needs it and read by
//! every later one, so a seal made before a restart still verifies after it. A key file
//! that others may read, or that is not a key, fails the start.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use codespace_types::{KEY_BYTES, ServerKey};
use rand::Rng;

use crate::config::UsageError;

/// The key file's name in the state directory.
pub(crate) const FILE_NAME: &str = "server-key";

/// The key in `state_dir` (which exists), generated there when it has none.
pub(crate) fn load_or_create(state_dir: &Path) -> Result<ServerKey, UsageError> {
    let path = state_dir.join(FILE_NAME);
    let failed = |e: std::io::Error| UsageError(format!("server key {}: {e}", path.display()));
    match read(&path) {
        Ok(key) => return key,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(failed(e)),
    }
    match create(&path) {
        Ok(()) => {}
        // Another server made it first: its key is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(failed(e)),
    }
    read(&path).map_err(failed)?
}

/// A key no seal outlives: for a command that makes no hold (`operations restore`).
pub(crate) fn ephemeral() -> ServerKey {
    let mut bytes = [0u8; KEY_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    ServerKey::from_bytes(bytes)
}

#[expect(clippy::disallowed_methods, reason = "the key file in the server's own state directory")]
fn read(path: &Path) -> std::io::Result<Result<ServerKey, UsageError>> {
    let meta = fs::symlink_metadata(path)?;
    let refuse = |why: &str| Ok(Err(UsageError(format!("server key {}: {why}", path.display()))));
    if !meta.file_type().is_file() {
        return refuse("not a regular file");
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return refuse("others may read or write it (it must be mode 0600)");
    }
    let text = fs::read_to_string(path)?;
    let mut bytes = [0u8; KEY_BYTES];
    match hex::decode_to_slice(text.trim(), &mut bytes) {
        Ok(()) => Ok(Ok(ServerKey::from_bytes(bytes))),
        Err(_) => refuse(
            "not 64 hex digits (remove it to make a new key; unresumed holds then refuse to run)",
        ),
    }
}

/// Writes a fresh key to a temporary file and links it into place: the link fails when a
/// key is already there, and a reader never sees a half-written one.
#[expect(clippy::disallowed_methods, reason = "the key file in the server's own state directory")]
fn create(path: &Path) -> std::io::Result<()> {
    let mut bytes = [0u8; KEY_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    let tmp: PathBuf = path.with_extension(format!("tmp-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
    f.write_all(hex::encode(bytes).as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600))?;
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    linked?;
    if let Some(dir) = path.parent() {
        fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
