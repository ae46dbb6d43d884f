//! A revert's plan: the writes that put every file an applied operation changed back to
//! its content before it, checked against what the operation left. The caller hands in
//! each file's after-version and its old content (read out of the undo record); this reads
//! the current content from the disk, which becomes the revert's own snapshot and undo
//! record, so a revert is written, verified, rolled back and recovered as any plan is.

use codespace_fs::{FsError, Root, Version, WorkspacePath};
use codespace_types::ChangeKind;

use super::{Entry, PlannedWrite, lookup};

/// One file of the operation to revert.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RevertFile {
    /// Workspace-relative path.
    pub path: String,
    /// What the operation left there (its after-version): the revert runs only while the
    /// disk still holds it.
    pub left: Version,
    /// The content before the operation (`None`: the path did not exist).
    #[serde(with = "serde_bytes")]
    pub back: Option<Vec<u8>>,
    /// Permission bits to re-create a removed file with.
    pub mode: Option<u32>,
    /// For a file the revert re-creates that the operation moved away: where it went.
    pub moved_to: Option<String>,
}

/// A path that no longer holds what the operation left.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Changed {
    pub path: String,
    /// What the operation left.
    pub expected: Version,
    /// What the disk holds now.
    pub actual: Version,
}

/// What a revert's preparation found.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum RevertPlan {
    /// Every file holds what the operation left: the writes that put them back.
    Ready(Vec<PlannedWrite>),
    /// These files changed since (every one of them): nothing may be written.
    Changed(Vec<Changed>),
}

/// Checks every file against what the operation left, then plans the writes back. Writes
/// nothing.
pub fn prepare_revert(root: &Root, files: &[RevertFile]) -> Result<RevertPlan, FsError> {
    let mut paths = Vec::with_capacity(files.len());
    let mut changed = Vec::new();
    for f in files {
        let path = WorkspacePath::parse(&f.path)?;
        let actual = root.version(&path)?;
        if actual != f.left {
            changed.push(Changed { path: f.path.clone(), expected: f.left, actual });
        }
        paths.push(path);
    }
    if !changed.is_empty() {
        return Ok(RevertPlan::Changed(changed));
    }
    let mut writes = Vec::with_capacity(files.len());
    for (f, path) in files.iter().zip(paths) {
        let now = match f.left {
            Version::Absent => None,
            _ => Some(read(root, &f.path)?),
        };
        // Raced since the check: the same answer as a change found by the check.
        let actual = now.as_deref().map_or(Version::Absent, Version::of_bytes);
        if actual != f.left {
            let changed = Changed { path: f.path.clone(), expected: f.left, actual };
            return Ok(RevertPlan::Changed(vec![changed]));
        }
        let current_mode = root.metadata(&path)?.map(|m| m.mode);
        let kind = match (&now, &f.back, &f.moved_to) {
            (_, Some(_), Some(_)) => ChangeKind::Move,
            (None, _, _) => ChangeKind::Add,
            (Some(_), None, _) => ChangeKind::Delete,
            (Some(_), Some(_), None) => ChangeKind::Update,
        };
        writes.push(PlannedWrite {
            path,
            kind,
            move_from: f.moved_to.clone().filter(|_| kind == ChangeKind::Move),
            before: now,
            after: f.back.clone(),
            mode: current_mode.or(f.mode),
        });
    }
    Ok(RevertPlan::Ready(writes))
}

fn read(root: &Root, path: &str) -> Result<Vec<u8>, FsError> {
    match lookup(root, path) {
        Ok(Entry::File(bytes)) => Ok(bytes),
        Ok(Entry::Absent) => Err(FsError::NotFound { path: path.to_owned() }),
        Ok(Entry::Directory) => Err(FsError::IsDirectory { path: path.to_owned() }),
        Err(super::LookupError::Fs(e)) => Err(e),
        Err(e @ super::LookupError::TooLarge { .. }) => Err(FsError::Io {
            path: path.to_owned(),
            op: "read".into(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}
