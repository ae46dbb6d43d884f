//! The command's root: its sources opened first, then assembled on a staging tmpfs (system
//! directories, `/proc`, `/dev`, `/tmp`, the policy's roots, the masks) and pivoted into.

use std::os::fd::{AsFd as _, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};

use super::mounts::{self, Bind, mkdir_all, mount_fs, open_path, place};
use crate::enter::{SandboxError, Visible};
use crate::policy::SandboxPolicy;

/// Host directories bound read-only into every sandbox when they exist (a symlink, as
/// `/bin -> usr/bin` on a merged-`/usr` system, is recreated as the same symlink).
pub(crate) const SYSTEM_DIRS: [&str; 10] =
    ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"];
/// Device nodes bound into the sandbox's `/dev` when the host has them.
const DEVICE_FILES: [&str; 6] =
    ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];
/// Host files masked in every sandbox: a command runs with the server's uid, and as root its
/// file-system uid still owns them even without capabilities.
const HOST_SECRETS: [&str; 4] = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"];
/// Where the new root is assembled: a tmpfs mounted over the host's `/tmp` in the private
/// mount namespace (the host never sees it). Sources are opened before it hides anything.
const STAGING: &str = "/tmp";
/// The links of the sandbox's `/dev` to the process's own descriptors.
const DEV_FD_LINKS: [(&str, &str); 4] = [
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
];

/// A symlink of the host recreated in the new root: where it is, and what it says.
type Link = (PathBuf, PathBuf);

/// What the new root is assembled from, opened before the staging tmpfs hides anything.
struct Sources {
    /// The system directories and `/sys`, and the symlinks among them.
    system: Vec<Bind>,
    system_links: Vec<Link>,
    /// The device nodes and `/dev/pts`, and the symlinks among them (placed after the
    /// `/dev` tmpfs is mounted: a link made before would be hidden by it).
    devices: Vec<Bind>,
    device_links: Vec<Link>,
    /// The policy's roots, parents before children.
    roots: Vec<Bind>,
    /// What masks a file.
    null: OwnedFd,
}

/// Builds the new root and pivots into it, then enters the policy's workdir there (or
/// `cwd`, by its canonical path, without one). Returns the canonical
/// roots for Landlock.
#[expect(
    clippy::disallowed_methods,
    reason = "the policy's roots are resolved once, in the init, before they are bound"
)]
pub(super) fn build(policy: &SandboxPolicy, cwd: &Path) -> Result<Visible, SandboxError> {
    rustix::mount::mount_change("/", MountPropagationFlags::REC | MountPropagationFlags::PRIVATE)
        .map_err(|e| SandboxError::errno_at("mount", Path::new("/"), e))?;
    let (system, system_links) = system_sources()?;
    let (devices, device_links) = device_sources()?;
    let (roots, visible) = root_sources(policy)?;
    let null = open_path(Path::new("/dev/null"))?;
    let sources = Sources { system, system_links, devices, device_links, roots, null };
    let cwd = match &policy.workdir {
        // Already the canonical path the workdir is bound at.
        Some(workdir) => workdir.clone(),
        None => std::fs::canonicalize(cwd).map_err(|e| SandboxError::io("cwd", &e))?,
    };

    // From here the host's /tmp is hidden in this namespace; only descriptors reach it.
    let staging = Path::new(STAGING);
    mount_fs(c"tmpfs", staging, MountFlags::NOSUID | MountFlags::NODEV, Some(c"mode=0755"))?;
    place_all(&sources.system)?;
    link_all(&sources.system_links)?;
    stage_proc()?;
    stage_dev(&sources.devices, &sources.device_links)?;
    stage_tmp()?;
    place_all(&sources.roots)?;
    mask(&policy.masked, &sources)?;
    drop(sources);
    pivot(&cwd)?;
    Ok(visible)
}

/// The system directories and `/sys` the host has: opened, or read as symlinks.
#[expect(
    clippy::disallowed_methods,
    reason = "inspects the host's system directories to bind them read-only"
)]
fn system_sources() -> Result<(Vec<Bind>, Vec<Link>), SandboxError> {
    let mut binds = Vec::new();
    let mut links = Vec::new();
    for dir in SYSTEM_DIRS.into_iter().chain(["/sys"]) {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => links.push(read_link(dir)?),
            Ok(m) if m.is_dir() => binds.push(Bind {
                source: open_path(Path::new(dir))?,
                target: dir.into(),
                writable: false,
                dir: true,
            }),
            _ => {}
        }
    }
    Ok((binds, links))
}

/// The device nodes (with `/dev/ptmx`) and `/dev/pts` the host has: opened, or read as
/// symlinks.
#[expect(
    clippy::disallowed_methods,
    reason = "inspects the host's devices to bind the minimal /dev"
)]
fn device_sources() -> Result<(Vec<Bind>, Vec<Link>), SandboxError> {
    let mut binds = Vec::new();
    let mut links = Vec::new();
    for dev in DEVICE_FILES.into_iter().chain(["/dev/ptmx"]) {
        match std::fs::symlink_metadata(dev) {
            Ok(m) if m.file_type().is_symlink() => links.push(read_link(dev)?),
            Ok(_) => binds.push(Bind {
                source: open_path(Path::new(dev))?,
                target: dev.into(),
                writable: true,
                dir: false,
            }),
            Err(_) => {}
        }
    }
    let pts = Path::new("/dev/pts");
    if pts.is_dir() {
        binds.push(Bind { source: open_path(pts)?, target: pts.into(), writable: true, dir: true });
    }
    Ok((binds, links))
}

#[expect(
    clippy::disallowed_methods,
    reason = "copies the host's system symlinks (/bin -> usr/bin) into the private root"
)]
fn read_link(path: &str) -> Result<Link, SandboxError> {
    let to = std::fs::read_link(path).map_err(|e| SandboxError::io("readlink", &e))?;
    Ok((PathBuf::from(path), to))
}

/// The policy's roots, canonical and opened, parents before children (so a root inside
/// another lands on top of it); with the same paths as Landlock will see them. The
/// workdir's source is the inherited working directory itself.
#[expect(
    clippy::disallowed_methods,
    reason = "resolves the policy's roots to their canonical paths to bind them"
)]
fn root_sources(policy: &SandboxPolicy) -> Result<(Vec<Bind>, Visible), SandboxError> {
    let mut visible = Visible::default();
    let mut roots = Vec::new();
    for (list, writable) in [(&policy.read_roots, false), (&policy.writable_roots, true)] {
        for root in list {
            let (source, canonical) = if policy.workdir.as_ref() == Some(root) {
                // The directory the caller entered through its descriptor: "." is no
                // lookup of the root's path, which may name something else by now.
                (open_path(Path::new("."))?, root.clone())
            } else {
                let canonical = std::fs::canonicalize(root)
                    .map_err(|e| SandboxError::io_at("root", root, &e))?;
                if !canonical.is_dir() {
                    let message = format!("{} is not a directory", root.display());
                    return Err(SandboxError::other("root", message));
                }
                (open_path(&canonical)?, canonical)
            };
            roots.push(Bind { source, target: canonical.clone(), writable, dir: true });
            if writable { &mut visible.write } else { &mut visible.read }.push(canonical);
        }
    }
    roots.sort_by_key(|b| b.target.components().count());
    Ok((roots, visible))
}

/// Where `path` of the new root is while it is assembled.
fn staged(path: &Path) -> PathBuf {
    Path::new(STAGING).join(path.strip_prefix("/").unwrap_or(path))
}

fn place_all(binds: &[Bind]) -> Result<(), SandboxError> {
    binds.iter().try_for_each(|bind| place(bind, &staged(&bind.target)))
}

#[expect(clippy::disallowed_methods, reason = "makes symlinks on the private root's tmpfs")]
fn link_all(links: &[Link]) -> Result<(), SandboxError> {
    for (link, to) in links {
        let at = staged(link);
        if let Some(parent) = at.parent() {
            mkdir_all(parent)?;
        }
        std::os::unix::fs::symlink(to, &at)
            .map_err(|e| SandboxError::io_at("symlink", link, &e))?;
    }
    Ok(())
}

/// A fresh `/proc`, of the new PID namespace.
fn stage_proc() -> Result<(), SandboxError> {
    let proc = staged(Path::new("/proc"));
    mkdir_all(&proc)?;
    let flags = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    mount_fs(c"proc", &proc, flags, None)
}

/// A minimal `/dev`: a tmpfs with the device nodes and `/dev/pts` bound in, a private
/// `/dev/shm`, and the links to the process's own descriptors.
#[expect(
    clippy::disallowed_methods,
    reason = "makes the /dev symlinks on the private root's tmpfs"
)]
fn stage_dev(devices: &[Bind], links: &[Link]) -> Result<(), SandboxError> {
    let dev = staged(Path::new("/dev"));
    mkdir_all(&dev)?;
    let flags = MountFlags::NOSUID | MountFlags::NOEXEC;
    mount_fs(c"tmpfs", &dev, flags, Some(c"mode=0755"))?;
    place_all(devices)?;
    link_all(links)?;
    let shm = dev.join("shm");
    mkdir_all(&shm)?;
    mount_fs(c"tmpfs", &shm, MountFlags::NOSUID | MountFlags::NODEV, Some(c"mode=1777"))?;
    for (name, to) in DEV_FD_LINKS {
        std::os::unix::fs::symlink(to, dev.join(name))
            .map_err(|e| SandboxError::io("symlink /dev", &e))?;
    }
    Ok(())
}

/// A private `/tmp`.
fn stage_tmp() -> Result<(), SandboxError> {
    let tmp = staged(Path::new("/tmp"));
    mkdir_all(&tmp)?;
    mount_fs(c"tmpfs", &tmp, MountFlags::NOSUID | MountFlags::NODEV, Some(c"mode=1777"))
}

/// Covers the policy's masked paths and the host's password hashes: a directory with an
/// empty read-only tmpfs, a file with `/dev/null`.
#[expect(
    clippy::disallowed_methods,
    reason = "inspects a masked path to cover it with the right kind of mount"
)]
fn mask(masked: &[PathBuf], sources: &Sources) -> Result<(), SandboxError> {
    for hidden in masked.iter().map(PathBuf::as_path).chain(HOST_SECRETS.map(Path::new)) {
        let at = staged(hidden);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {
                let flags = MountFlags::RDONLY
                    | MountFlags::NOSUID
                    | MountFlags::NODEV
                    | MountFlags::NOEXEC;
                mount_fs(c"tmpfs", &at, flags, Some(c"mode=0000"))?;
            }
            Ok(m) if m.is_file() => mounts::bind_read_only(sources.null.as_fd(), &at)?,
            _ => {}
        }
    }
    Ok(())
}

/// Pivots into the staged root, detaches the old one, makes the new root read-only and
/// enters `cwd`.
fn pivot(cwd: &Path) -> Result<(), SandboxError> {
    std::env::set_current_dir(STAGING).map_err(|e| SandboxError::io("chdir new root", &e))?;
    // pivot_root(".", ".") stacks the old root under the new one at the same place.
    rustix::process::pivot_root(".", ".").map_err(|e| SandboxError::errno("pivot_root", e))?;
    rustix::mount::unmount(".", UnmountFlags::DETACH)
        .map_err(|e| SandboxError::errno("detach old root", e))?;
    std::env::set_current_dir("/").map_err(|e| SandboxError::io("chdir /", &e))?;
    let flags = MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV;
    mounts::remount(Path::new("/"), flags)?;
    std::env::set_current_dir(cwd).map_err(|e| SandboxError::io_at("chdir", cwd, &e))
}
