//! The one `PATH` lookup: where `argv[0]` may be, the way `execvp` searches. Its two users
//! differ only in what they may see:
//! - an unconfined command's program is looked up by the reaper shim, already in the
//!   command's working directory ([`PathSearch::find`]): the first candidate that is an
//!   executable regular file, a relative one resolved against that directory, never by
//!   joining the workspace's path again;
//! - a sandboxed command's is looked up by the launcher from inside the private root, by
//!   trying `execve` on each candidate (`launch/exec.rs`), so only what the sandbox shows
//!   matches, and a miss names the entries the host has but the sandbox hides.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use std::time::Duration;

use rustix::fs::{Access, FileType};

/// Attempts at an `execve` that says the program is busy being written (ETXTBSY), and the
/// pause between them, for both callers: the file was just written and some process
/// forked meanwhile still holds the write descriptor until its own exec (a race every
/// forking server has), which clears within microseconds.
pub const TXTBSY_RETRIES: u32 = 20;
/// See [`TXTBSY_RETRIES`].
pub const TXTBSY_PAUSE: Duration = Duration::from_millis(5);

/// Where a command's program may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathSearch {
    /// `argv[0]` as given, for messages.
    name: String,
    /// `PATH`'s directories in order (an empty entry is `.`); none when `argv[0]` holds a
    /// `/`, which is then the one candidate.
    dirs: Vec<PathBuf>,
    /// Paths to try, in order.
    candidates: Vec<PathBuf>,
}

/// Why no program was found: an errno and a message naming `argv[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    /// `ENOENT` or `EACCES`.
    pub errno: i32,
    /// What was wrong, starting with `argv[0]`.
    pub message: String,
}

impl PathSearch {
    /// The candidates for `argv0` on `search_path` (the command's `PATH`). An empty entry
    /// is the working directory, spelled `./argv0` so that exec does not search again.
    pub fn new(argv0: &OsStr, search_path: &OsStr) -> Self {
        let name = argv0.to_string_lossy().into_owned();
        if argv0.as_bytes().contains(&b'/') {
            return Self { name, dirs: Vec::new(), candidates: vec![PathBuf::from(argv0)] };
        }
        let dirs: Vec<PathBuf> = search_path
            .as_bytes()
            .split(|b| *b == b':')
            .map(|dir| match dir {
                b"" => PathBuf::from("."),
                dir => PathBuf::from(OsStr::from_bytes(dir)),
            })
            .collect();
        let candidates = dirs.iter().map(|d| d.join(argv0)).collect();
        Self { name, dirs, candidates }
    }

    /// `argv[0]` as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `PATH` directories searched (none when `argv[0]` holds a `/`).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The paths to try, in order.
    pub fn candidates(&self) -> &[PathBuf] {
        &self.candidates
    }

    /// The first candidate that is an executable regular file, looked at from this
    /// process's own view of the filesystem.
    pub fn find(&self) -> Result<PathBuf, NotFound> {
        if self.dirs.is_empty() {
            let path = &self.candidates[..];
            return match path.first().map(|p| (p, check_executable(p))) {
                Some((p, Ok(()))) => Ok(p.clone()),
                Some((_, Err(refusal))) => Err(refusal.not_found(&self.name)),
                None => Err(Refusal::Missing.not_found(&self.name)),
            };
        }
        self.candidates.iter().find(|c| check_executable(c).is_ok()).cloned().ok_or_else(|| {
            NotFound {
                errno: libc::ENOENT,
                message: format!("{}: command not found on PATH", self.name),
            }
        })
    }
}

/// Why a path cannot be the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Missing,
    NotRegular,
    NotExecutable,
}

impl Refusal {
    fn not_found(self, name: &str) -> NotFound {
        let (errno, why) = match self {
            Self::Missing => (libc::ENOENT, "no such file"),
            Self::NotRegular => (libc::EACCES, "not a regular file"),
            Self::NotExecutable => (libc::EACCES, "permission denied"),
        };
        NotFound { errno, message: format!("{name}: {why}") }
    }
}

fn check_executable(path: &Path) -> Result<(), Refusal> {
    let stat = rustix::fs::stat(path).map_err(|_| Refusal::Missing)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(Refusal::NotRegular);
    }
    rustix::fs::access(path, Access::EXEC_OK).map_err(|_| Refusal::NotExecutable)
}

#[cfg(test)]
mod tests;
