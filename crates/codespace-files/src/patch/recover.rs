//! Start-up rollback of a patch a crash interrupted: what the disk holds at each planned
//! path (its before-version, its after-version, or something else), and putting every
//! after-version back to the before-content the caller kept in its undo log.
//!
//! The runner never sees the log: the caller reads it and hands the bytes in.

use codespace_fs::{FsError, Version, WorkspacePath};

use super::PatchFs;

/// One planned file of an interrupted operation, as the ledger and the undo log kept it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct InterruptedFile {
    /// Workspace-relative path.
    pub path: String,
    pub before: Version,
    pub after: Version,
    /// The before-content the undo log kept; `None` when it kept none.
    #[serde(with = "serde_bytes")]
    pub undo: Option<Vec<u8>>,
    /// Permission bits to restore the before-content with.
    pub mode: Option<u32>,
}

/// What the disk holds at a planned path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Found {
    /// Its before-version (also when before and after are equal).
    Before,
    /// Its after-version.
    After,
    /// Content neither version names.
    Other(Version),
    /// The path cannot be read; why.
    Unreadable(String),
}

/// What rolling one path back did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Undone {
    /// It held its before-version: nothing to do.
    Untouched,
    /// Its before-content was written back from the undo log and verified.
    Restored,
    /// The patch created it; it is removed again.
    Removed,
    /// It holds content neither version names: left as it is.
    Taken(Version),
    /// It could not be put back; why.
    Failed(String),
}

/// Hashes every planned path beneath the root.
pub fn survey(fs: &dyn PatchFs, files: &[InterruptedFile]) -> Vec<Found> {
    files
        .iter()
        .map(|f| {
            let now = WorkspacePath::parse(&f.path).and_then(|p| fs.version(&p));
            match now {
                Ok(v) if v == f.before => Found::Before,
                Ok(v) if v == f.after => Found::After,
                Ok(v) => Found::Other(v),
                Err(e) => Found::Unreadable(e.to_string()),
            }
        })
        .collect()
}

/// Puts every path `found` at its after-version back to its before-version: restores
/// first, removals last, so content is written back before anything is taken away.
pub fn roll_back(fs: &dyn PatchFs, files: &[InterruptedFile], found: &[Found]) -> Vec<Undone> {
    let mut undone: Vec<Undone> = vec![Undone::Untouched; files.len()];
    let restores = (0..files.len()).filter(|&i| files[i].before != Version::Absent);
    let removals = (0..files.len()).filter(|&i| files[i].before == Version::Absent);
    for i in restores.chain(removals) {
        undone[i] = match found.get(i) {
            Some(Found::Before) => Undone::Untouched,
            Some(Found::After) => put_back(fs, &files[i]),
            Some(Found::Other(v)) => Undone::Taken(*v),
            Some(Found::Unreadable(why)) => Undone::Failed(why.clone()),
            None => Undone::Failed("not surveyed".to_owned()),
        };
    }
    undone
}

/// Puts one path back to its before-version: removes it when the patch created it, else
/// writes the undo log's copy (checked against the before-version) and verifies it.
pub fn put_back(fs: &dyn PatchFs, f: &InterruptedFile) -> Undone {
    let path = match WorkspacePath::parse(&f.path) {
        Ok(p) => p,
        Err(e) => return Undone::Failed(e.to_string()),
    };
    if f.before == Version::Absent {
        return match fs.remove_file(&path).and_then(|()| fs.version(&path)) {
            Ok(Version::Absent) => Undone::Removed,
            Ok(v) => Undone::Taken(v),
            Err(e) => Undone::Failed(e.to_string()),
        };
    }
    let Some(bytes) = f.undo.as_deref() else {
        return Undone::Failed("the undo log holds no copy of its old content".to_owned());
    };
    if Version::of_bytes(bytes) != f.before {
        return Undone::Failed("the undo log's copy does not match its old version".to_owned());
    }
    match write_back(fs, &path, bytes, f.mode) {
        Ok(v) if v == f.before => Undone::Restored,
        Ok(v) => Undone::Failed(format!("it reads {v} after restoring, not {}", f.before)),
        Err(e) => Undone::Failed(e.to_string()),
    }
}

fn write_back(
    fs: &dyn PatchFs,
    path: &WorkspacePath,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<Version, FsError> {
    // A deleted file's directory may be gone too (a move's source emptied it).
    if let Some((parent, _)) = path.as_str().rsplit_once('/') {
        let parent = WorkspacePath::parse(parent)?;
        if !fs.exists(&parent)? {
            fs.create_dirs(&parent)?;
        }
    }
    fs.write_atomic(path, bytes, mode)?;
    fs.version(path)
}
