//! The mount steps the root is built from: making a mount point, binding a source opened
//! earlier (read-only and `nosuid` unless writable), mounting a fresh file system, and the
//! remount that keeps the flags the kernel locks in a user namespace.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, StatVfsMountFlags};
use rustix::mount::MountFlags;

use crate::enter::SandboxError;

/// One bind mount of the new root.
pub(super) struct Bind {
    /// `O_PATH` descriptor of the source, opened before the staging tmpfs hid anything.
    pub(super) source: OwnedFd,
    /// Canonical absolute path inside the new root.
    pub(super) target: PathBuf,
    pub(super) writable: bool,
    /// Directory (`true`) or a single file such as a device node.
    pub(super) dir: bool,
}

/// The flags a read-only remount must keep when the mount has them: a remount in a user
/// namespace may not clear a flag the original mount locked.
const LOCKED_FLAGS: [(StatVfsMountFlags, MountFlags); 6] = [
    (StatVfsMountFlags::RDONLY, MountFlags::RDONLY),
    (StatVfsMountFlags::NODEV, MountFlags::NODEV),
    (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
    (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
    (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
    (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
];

/// Creates the mount point of `bind` at `at`, binds it, and remounts it read-only and
/// `nosuid` unless it is writable.
#[expect(
    clippy::disallowed_methods,
    reason = "makes the mount points of the private root, on its tmpfs"
)]
pub(super) fn place(bind: &Bind, at: &Path) -> Result<(), SandboxError> {
    if bind.dir {
        mkdir_all(at)?;
    } else {
        if let Some(parent) = at.parent() {
            mkdir_all(parent)?;
        }
        if std::fs::symlink_metadata(at).is_err() {
            std::fs::File::create(at).map_err(|e| SandboxError::io_at("mount point", at, &e))?;
        }
    }
    let source = fd_path(&bind.source);
    // Recursive: a user namespace may not bind a mount without the mounts locked beneath
    // it (EINVAL), which would uncover what they hide.
    rustix::mount::mount_bind_recursive(source.as_str(), at)
        .map_err(|e| SandboxError::errno_at("mount", at, e))
        .map_err(|e| SandboxError::other("bind", format!("{}: {e}", bind.target.display())))?;
    // A writable bind keeps the source's flags: `nosuid` would add nothing there, since
    // no-new-privs already makes set-id bits inert for the command.
    if bind.writable { Ok(()) } else { remount_read_only(at) }
}

/// Binds `source` read-only over the file `at` (a masked path).
pub(super) fn bind_read_only(source: BorrowedFd<'_>, at: &Path) -> Result<(), SandboxError> {
    rustix::mount::mount_bind(fd_path(&source).as_str(), at)
        .map_err(|e| SandboxError::errno_at("mount", at, e))?;
    remount_read_only(at)
}

/// Remounts the bind at `at` read-only and `nosuid`, keeping the flags the kernel locks
/// for a user namespace.
fn remount_read_only(at: &Path) -> Result<(), SandboxError> {
    let have = rustix::fs::statvfs(at).map_err(|e| SandboxError::errno("statvfs", e))?.f_flag;
    let mut flags = MountFlags::BIND | MountFlags::NOSUID | MountFlags::RDONLY;
    for (locked, keep) in LOCKED_FLAGS {
        if have.contains(locked) {
            flags |= keep;
        }
    }
    remount(at, flags)
}

/// Remounts the bind (or root) at `at` with `flags`.
pub(super) fn remount(at: &Path, flags: MountFlags) -> Result<(), SandboxError> {
    rustix::mount::mount_remount(at, flags, c"").map_err(|e| SandboxError::errno_at("mount", at, e))
}

/// Mounts a fresh file system of type `fs` (`tmpfs`, `proc`) at `at`.
pub(super) fn mount_fs(
    fs: &CStr,
    at: &Path,
    flags: MountFlags,
    data: Option<&CStr>,
) -> Result<(), SandboxError> {
    rustix::mount::mount(fs, at, fs, flags, data)
        .map_err(|e| SandboxError::errno_at("mount", at, e))
}

#[expect(clippy::disallowed_methods, reason = "makes directories on the private root's tmpfs")]
pub(super) fn mkdir_all(path: &Path) -> Result<(), SandboxError> {
    std::fs::create_dir_all(path).map_err(|e| SandboxError::io_at("mount point", path, &e))
}

/// An `O_PATH` descriptor of `path`, to bind it once the staging tmpfs hides the host's
/// `/tmp`.
#[expect(clippy::disallowed_methods, reason = "opens a bind source as O_PATH for the mount")]
pub(super) fn open_path(path: &Path) -> Result<OwnedFd, SandboxError> {
    rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| SandboxError::errno_at("open", path, e))
}

/// The path through which a bind reaches the source `fd` holds.
fn fd_path(fd: &impl AsRawFd) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}
