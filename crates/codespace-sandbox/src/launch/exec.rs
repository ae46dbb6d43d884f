//! Running the command's program from inside its own world: each `PATH` candidate
//! ([`crate::path_search`]) tried with `execve` the way `execvp` does, from inside the
//! private root, after the command has restricted itself. A directory of the host's `PATH`
//! that the sandbox does not show therefore never matches, and a program the sandbox does
//! show is found even when an earlier, hidden entry holds one of the same name.
//!
//! When nothing is found, the message names the `PATH` entries that exist on the host
//! (checked in the monitor, before any namespace changes) but not inside the root, since
//! `extra_read_roots` is what would show them. When the program is there but `execve`
//! still says ENOENT, what is missing is its interpreter (a `#!` line naming a hidden
//! python, say, or an ELF loader), and the message says that instead. Either message names
//! the target of a symlink that leads out of every root the sandbox shows (a virtualenv's
//! `python`, say, linked to an interpreter installed elsewhere) and the directory to add.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use rustix::io::Errno;

use crate::enter::SandboxError;
use crate::path_search::{PathSearch, TXTBSY_PAUSE, TXTBSY_RETRIES};
use crate::sys::{self, ExecArgs};

/// Where the program may be, and what the host has that the sandbox may hide.
pub(super) struct Program {
    /// `argv[0]` as given, for messages.
    name: String,
    /// Paths to try, in `PATH` order (one when `argv[0]` holds a `/`).
    candidates: Vec<CString>,
    /// The `PATH` entries that are directories on the host (relative ones against the
    /// command's working directory, which is the same inside and out).
    host_dirs: Vec<PathBuf>,
    /// Candidates, and the `#!` interpreters of those the host has, that are symlinks on
    /// the host, each with the file it resolves to there.
    links: Vec<(PathBuf, PathBuf)>,
}

impl Program {
    /// Runs in the monitor, in the host's namespaces and the command's working directory.
    pub(super) fn new(argv0: &OsStr, search_path: &OsStr) -> Result<Self, SandboxError> {
        let search = PathSearch::new(argv0, search_path);
        let candidates = search
            .candidates()
            .iter()
            .map(|p| CString::new(p.as_os_str().as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| SandboxError::other("lookup", "PATH or argv[0] contains NUL"))?;
        let host_dirs = search.dirs().iter().filter(|d| is_dir(d)).cloned().collect();
        let mut links = Vec::new();
        for candidate in search.candidates() {
            links.extend(host_link(candidate).map(|target| (candidate.clone(), target)));
            if let Some(interpreter) = shebang(candidate).map(PathBuf::from) {
                links.extend(host_link(&interpreter).map(|target| (interpreter, target)));
            }
        }
        Ok(Self { name: search.name().to_owned(), candidates, host_dirs, links })
    }

    /// Runs in the command, restricted and inside its root: execs the first candidate that
    /// can be exec'd, as `execvp` would (a missing or inaccessible one is skipped, any
    /// other error ends the search). Returns only with why nothing was exec'd.
    pub(super) fn exec(&self, argv: &ExecArgs<'_>) -> SandboxError {
        let (mut denied, mut no_interpreter) = (None, None);
        for candidate in &self.candidates {
            match exec_one(candidate, argv) {
                // The file is there: its interpreter is what is missing.
                Errno::NOENT if exists(candidate) => {
                    no_interpreter = no_interpreter.or(Some(candidate));
                }
                Errno::NOENT | Errno::NOTDIR | Errno::NAMETOOLONG | Errno::LOOP => {}
                Errno::ACCESS => denied = denied.or(Some(candidate)),
                other => {
                    let path = Path::new(OsStr::from_bytes(candidate.as_bytes()));
                    return SandboxError::errno_at("exec", path, other);
                }
            }
        }
        if let Some(path) = denied {
            let path = Path::new(OsStr::from_bytes(path.as_bytes()));
            return SandboxError::errno_at("exec", path, Errno::ACCESS);
        }
        if let Some(path) = no_interpreter {
            return self.interpreter_missing(Path::new(OsStr::from_bytes(path.as_bytes())));
        }
        self.not_found()
    }

    fn interpreter_missing(&self, path: &Path) -> SandboxError {
        let interpreter = shebang(path);
        let missing = match &interpreter {
            Some(interpreter) => format!("its interpreter {interpreter} (its #! line)"),
            None => "the loader or interpreter it names".to_owned(),
        };
        let hint = interpreter.and_then(|i| self.link_hint(Path::new(&i))).unwrap_or_else(|| {
            "the workspace's extra_read_roots would show it (the directory it lives in)".to_owned()
        });
        let message = format!(
            "{}: {} is inside the sandbox, but {missing} is not; {hint}",
            self.name,
            path.display()
        );
        SandboxError { step: "exec", message, errno: Errno::NOENT.raw_os_error() }
    }

    fn not_found(&self) -> SandboxError {
        let mut message = if self.candidates.len() == 1 && self.host_dirs.is_empty() {
            format!("{}: no such file inside the sandbox", self.name)
        } else {
            format!("{}: command not found on PATH inside the sandbox", self.name)
        };
        let hidden: Vec<String> =
            self.host_dirs.iter().filter(|d| !is_dir(d)).map(|d| d.display().to_string()).collect();
        if !hidden.is_empty() {
            message.push_str(&format!(
                "; these PATH entries exist on the host but are hidden from the sandbox: {} \
                 (the workspace's extra_read_roots would show them)",
                hidden.join(", ")
            ));
        }
        let candidates = self.candidates.iter().map(|c| Path::new(OsStr::from_bytes(c.as_bytes())));
        if let Some(hint) = candidates.filter_map(|c| self.link_hint(c)).next() {
            message.push_str("; ");
            message.push_str(&hint);
        }
        SandboxError { step: "lookup", message, errno: Errno::NOENT.raw_os_error() }
    }

    /// What to add when `path` is a host symlink whose target the sandbox does not show:
    /// the target's installation prefix (the parent of its `bin`), since an interpreter
    /// needs its libraries beside it.
    fn link_hint(&self, path: &Path) -> Option<String> {
        let (_, target) = self.links.iter().find(|(link, _)| link == path)?;
        if exists_path(target) {
            return None;
        }
        let dir = target.parent()?;
        let root = match dir.file_name() {
            Some(name) if name == "bin" => dir.parent().unwrap_or(dir),
            _ => dir,
        };
        Some(format!(
            "{} is a symlink to {}, outside every directory the sandbox shows: add {} to the \
             workspace's extra_read_roots (the registry) to run it",
            path.display(),
            target.display(),
            root.display()
        ))
    }
}

/// The file `path` resolves to on the host when it is a symlink (read in the monitor,
/// for messages only: nothing is opened through it).
#[expect(
    clippy::disallowed_methods,
    reason = "resolves a symlink on the host only to name its target in a message"
)]
fn host_link(path: &Path) -> Option<PathBuf> {
    let st = rustix::fs::lstat(path).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Symlink {
        return None;
    }
    std::fs::canonicalize(path).ok()
}

fn exists_path(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::EXISTS).is_ok()
}

/// One `execve`, retried briefly while the file is busy being written (a race every forking
/// server has: a process forked meanwhile holds the write descriptor until its own exec).
fn exec_one(candidate: &CString, argv: &ExecArgs<'_>) -> Errno {
    for _ in 0..TXTBSY_RETRIES {
        let e = Errno::from_io_error(&sys::execv(candidate, argv)).unwrap_or(Errno::NOENT);
        if e != Errno::TXTBSY {
            return e;
        }
        std::thread::sleep(TXTBSY_PAUSE);
    }
    Errno::TXTBSY
}

fn exists(candidate: &CString) -> bool {
    rustix::fs::access(candidate.as_c_str(), rustix::fs::Access::EXISTS).is_ok()
}

/// The interpreter a `#!` line names (its first word), if the file starts with one.
#[expect(
    clippy::disallowed_methods,
    reason = "reads the #! line of a candidate program (in the monitor, and inside the private root)"
)]
fn shebang(path: &Path) -> Option<String> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let mut head = [0u8; 256];
    let n = rustix::io::read(&fd, &mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?.split(|b| *b == b'\n').next()?;
    let word = line.split(|b| b.is_ascii_whitespace()).find(|w| !w.is_empty())?;
    Some(String::from_utf8_lossy(word).into_owned())
}

fn is_dir(path: &Path) -> bool {
    rustix::fs::stat(path).is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir())
}

#[cfg(test)]
mod tests;
