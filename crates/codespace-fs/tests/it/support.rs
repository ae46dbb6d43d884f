//! Shared fixture: a temp dir holding `ws/` (the root under test) and `outside/`, which
//! no test may ever read through the root or change.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use codespace_fs::{FsError, Root, WorkspacePath};
use tempfile::TempDir;

/// The content of every secret placed outside the root.
pub(crate) const SECRET: &[u8] = b"OUTSIDE-SECRET\n";

pub(crate) struct Fx {
    _tmp: TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) root: Root,
}

impl Fx {
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let outside = tmp.path().join("outside");
        fs::create_dir(&ws).unwrap();
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        let root = Root::open(&ws).unwrap();
        Fx { _tmp: tmp, ws, outside, root }
    }

    /// Writes `ws/rel`, creating parents.
    pub(crate) fn file(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.ws.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, bytes).unwrap();
        path
    }

    pub(crate) fn dir(&self, rel: &str) -> PathBuf {
        let path = self.ws.join(rel);
        fs::create_dir_all(&path).unwrap();
        path
    }

    /// `ws/rel -> target` (target taken verbatim, relative or absolute).
    pub(crate) fn symlink(&self, target: impl AsRef<Path>, rel: &str) -> PathBuf {
        let path = self.ws.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(target, &path).unwrap();
        path
    }

    pub(crate) fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.ws.join(rel)).unwrap()
    }

    /// Every file under `outside/` with its content (symlinks as their target text).
    pub(crate) fn outside_snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        snapshot(&self.outside, &mut out);
        out
    }
}

fn snapshot(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            out.insert(
                path.clone(),
                fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes(),
            );
        } else if kind.is_dir() {
            out.insert(path.clone(), b"<dir>".to_vec());
            snapshot(&path, out);
        } else {
            out.insert(path.clone(), fs::read(&path).unwrap());
        }
    }
}

pub(crate) fn p(s: &str) -> WorkspacePath {
    WorkspacePath::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

pub(crate) fn assert_symlink_rejected<T: std::fmt::Debug>(result: Result<T, FsError>) {
    match result {
        Err(FsError::SymlinkRejected { .. }) => {}
        other => panic!("expected SymlinkRejected, got {other:?}"),
    }
}

/// Reports a test that cannot run on this host. It says so on stderr rather than passing
/// quietly, and fails where the host is required to run everything
/// (`CODESPACE_REQUIRE_SANDBOX=1`, as in CI).
pub(crate) fn cannot_run(test: &str, reason: &str) {
    let required = std::env::var("CODESPACE_REQUIRE_SANDBOX").is_ok_and(|v| v == "1");
    assert!(!required, "{test} cannot run here ({reason}) and CODESPACE_REQUIRE_SANDBOX=1");
    eprintln!("SKIPPED {test}: {reason}");
}
