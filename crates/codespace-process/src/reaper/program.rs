//! Finding the command's program: `argv[0]` looked up on the child's `PATH` the way
//! `execvp` would. This runs in the shim, whose working directory is already the command's
//! (entered through the descriptor the shim was passed), so a candidate relative to it (a
//! relative `PATH` entry, or an `argv[0]` such as `./build.sh`) is resolved against that
//! directory and never by joining the workspace's path again; the server itself resolves no
//! workspace path.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{Access, FileType};

use crate::protocol::ShimReport;

/// The program to exec for `argv0`, or the `failed` report saying why there is none.
pub(super) fn resolve(argv0: &OsStr, search_path: &OsStr) -> Result<PathBuf, ShimReport> {
    let name = argv0.to_string_lossy();
    if argv0.as_bytes().contains(&b'/') {
        let path = PathBuf::from(argv0);
        return match check_executable(&path) {
            Ok(()) => Ok(path),
            Err(refusal) => Err(refusal.report(&name)),
        };
    }
    candidates(argv0, search_path).into_iter().find(|c| check_executable(c).is_ok()).ok_or_else(
        || ShimReport::Failed {
            errno: libc::ENOENT,
            message: format!("{name}: command not found on PATH"),
        },
    )
}

/// Where a bare `argv0` may be, in `PATH` order. An empty entry is the working directory,
/// spelled `./argv0` so that exec does not search `PATH` again.
fn candidates(argv0: &OsStr, search_path: &OsStr) -> Vec<PathBuf> {
    search_path
        .as_bytes()
        .split(|b| *b == b':')
        .map(|dir| match dir {
            b"" => Path::new(".").join(argv0),
            dir => Path::new(OsStr::from_bytes(dir)).join(argv0),
        })
        .collect()
}

/// Why a path cannot be the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Missing,
    NotRegular,
    NotExecutable,
}

impl Refusal {
    fn report(self, name: &str) -> ShimReport {
        let (errno, why) = match self {
            Self::Missing => (libc::ENOENT, "no such file"),
            Self::NotRegular => (libc::EACCES, "not a regular file"),
            Self::NotExecutable => (libc::EACCES, "permission denied"),
        };
        ShimReport::Failed { errno, message: format!("{name}: {why}") }
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
mod tests {
    use super::*;

    #[test]
    fn candidates_follow_path_order_and_stay_relative() {
        let got = candidates(OsStr::new("tool"), OsStr::new("/usr/bin:bin::./x"));
        let want: Vec<PathBuf> =
            ["/usr/bin/tool", "bin/tool", "./tool", "./x/tool"].iter().map(PathBuf::from).collect();
        assert_eq!(got, want);
        assert_eq!(candidates(OsStr::new("t"), OsStr::new("")), vec![PathBuf::from("./t")]);
    }

    #[test]
    fn refusals_say_why() {
        let missing = resolve(OsStr::new("/nonexistent/dir/tool"), OsStr::new("/bin"));
        assert!(
            matches!(&missing, Err(ShimReport::Failed { message, .. }) if message.ends_with("no such file")),
            "{missing:?}"
        );
        let dir = resolve(OsStr::new("/"), OsStr::new("/bin"));
        assert!(
            matches!(&dir, Err(ShimReport::Failed { message, .. }) if message.ends_with("not a regular file")),
            "{dir:?}"
        );
        let none = resolve(OsStr::new("no-such-binary-codespace-test"), OsStr::new("/bin"));
        assert!(
            matches!(&none, Err(ShimReport::Failed { message, .. }) if message.ends_with("command not found on PATH")),
            "{none:?}"
        );
        assert_eq!(
            resolve(OsStr::new("sh"), OsStr::new("/nonexistent:/bin")),
            Ok("/bin/sh".into())
        );
    }
}
