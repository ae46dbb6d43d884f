//! The patch transaction: plan a V4A patch against the disk, then write it all-or-nothing
//! (snapshot in memory, temp + fsync + rename per file, verify every hash, restore on any
//! failure); `recover` rolls a tree a crash left half-written back to its old content;
//! `revert` plans the writes that put an applied operation's files back.

use std::io::Read;

use codespace_fs::{FsError, Root, Version, WorkspacePath};
use codespace_patch::{Entry, PatchError, PlanError};
use codespace_types::ChangeKind;

/// Largest file a patch may read or write, in bytes.
pub const MAX_PATCH_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a patch could not be planned. Nothing has been written.
#[derive(Debug, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum PlanFailure {
    #[error(transparent)]
    Parse(#[from] PatchError),
    #[error(transparent)]
    Plan(#[from] PlanError<LookupError>),
}

/// A filesystem answer the planner could not use.
#[derive(Debug, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum LookupError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(
        "{path:?} is larger than {MAX_PATCH_FILE_BYTES} bytes; patches edit files up to that size"
    )]
    TooLarge { path: String },
}

/// One file change with everything needed to write it and to undo it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PlannedWrite {
    pub path: WorkspacePath,
    pub kind: ChangeKind,
    pub move_from: Option<String>,
    /// None: the path did not exist.
    #[serde(with = "serde_bytes")]
    pub before: Option<Vec<u8>>,
    /// None: the path is deleted.
    #[serde(with = "serde_bytes")]
    pub after: Option<Vec<u8>>,
    /// Permission bits of the file before (or of the move source, for a move destination).
    pub mode: Option<u32>,
}

impl PlannedWrite {
    pub fn before_version(&self) -> Version {
        self.before.as_deref().map_or(Version::Absent, Version::of_bytes)
    }
    pub fn after_version(&self) -> Version {
        self.after.as_deref().map_or(Version::Absent, Version::of_bytes)
    }
}

/// Parses and plans `patch` against the files under `root` as they are now.
pub fn prepare(root: &Root, patch: &str) -> Result<Vec<PlannedWrite>, PlanFailure> {
    let parsed = codespace_patch::parse(patch)?;
    let plan = codespace_patch::plan(&parsed, |path| lookup(root, path))?;
    let mut writes = Vec::with_capacity(plan.changes.len());
    for change in plan.changes {
        // A path beneath a directory the patch creates was never looked up: its length is
        // checked here, and a refusal names the operation that wrote it.
        let path = WorkspacePath::parse(&change.path).map_err(LookupError::from).map_err(|e| {
            PlanFailure::Plan(PlanError::Lookup {
                op: change.op,
                path: change.path.clone(),
                line: change.line,
                source: e,
            })
        })?;
        let mode_of = change.move_from.as_deref().unwrap_or(&change.path);
        let mode = WorkspacePath::parse(mode_of)
            .ok()
            .and_then(|p| root.metadata(&p).ok().flatten())
            .map(|m| m.mode);
        writes.push(PlannedWrite {
            path,
            kind: change.kind,
            move_from: change.move_from,
            before: change.before,
            after: change.after,
            mode,
        });
    }
    Ok(writes)
}

fn lookup(root: &Root, path: &str) -> Result<Entry, LookupError> {
    let wp = WorkspacePath::parse(path)?;
    let file = match root.open_file(&wp) {
        Ok(f) => f,
        Err(FsError::NotFound { .. }) => return Ok(Entry::Absent),
        Err(FsError::IsDirectory { .. }) => return Ok(Entry::Directory),
        Err(e) => return Err(e.into()),
    };
    // Sized from the descriptor up front: one read instead of a doubling series.
    let size = file.metadata().map_or(0, |m| m.len()).min(MAX_PATCH_FILE_BYTES + 1);
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0) + 1);
    file.take(MAX_PATCH_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|source| FsError::Io {
        path: path.to_owned(),
        op: "read".into(),
        source,
    })?;
    if bytes.len() as u64 > MAX_PATCH_FILE_BYTES {
        return Err(LookupError::TooLarge { path: path.to_owned() });
    }
    Ok(Entry::File(bytes))
}

/// The filesystem operations a transaction needs; `Root` is the real one, tests inject
/// faults through another.
pub trait PatchFs {
    fn exists(&self, p: &WorkspacePath) -> Result<bool, FsError>;
    fn create_dirs(&self, p: &WorkspacePath) -> Result<(), FsError>;
    fn write_atomic(
        &self,
        p: &WorkspacePath,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Result<(), FsError>;
    fn remove_file(&self, p: &WorkspacePath) -> Result<(), FsError>;
    fn remove_empty_dir(&self, p: &WorkspacePath) -> Result<(), FsError>;
    fn version(&self, p: &WorkspacePath) -> Result<Version, FsError>;
    /// Called once every write and removal has landed, before verification: a seam where
    /// a test races the transaction (a directory swapped under it). Nothing by default.
    fn written(&self) {}
}

impl PatchFs for Root {
    fn exists(&self, p: &WorkspacePath) -> Result<bool, FsError> {
        Ok(self.metadata(p)?.is_some())
    }
    fn create_dirs(&self, p: &WorkspacePath) -> Result<(), FsError> {
        Root::create_dirs(self, p)
    }
    fn write_atomic(
        &self,
        p: &WorkspacePath,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Result<(), FsError> {
        Root::write_atomic(self, p, bytes, mode)
    }
    fn remove_file(&self, p: &WorkspacePath) -> Result<(), FsError> {
        Root::remove_file(self, p)
    }
    fn remove_empty_dir(&self, p: &WorkspacePath) -> Result<(), FsError> {
        Root::remove_empty_dir(self, p)
    }
    fn version(&self, p: &WorkspacePath) -> Result<Version, FsError> {
        Root::version(self, p)
    }
}

/// How a transaction ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ApplyOutcome {
    /// Every file's on-disk hash equals the plan.
    Applied,
    /// A step failed; every file was restored to its snapshot.
    RolledBack { failure: String },
    /// A step failed and these paths could not be restored.
    Partial { failure: String, unrestored: Vec<String> },
}

enum Done {
    Wrote(usize),
    Removed(usize),
    MadeDir(WorkspacePath),
}

/// Writes every planned change, verifies every hash, and restores the snapshot on any
/// failure. Writes come first and deletions last, so a move never loses its content.
pub fn apply(fs: &dyn PatchFs, writes: &[PlannedWrite]) -> ApplyOutcome {
    let mut done = Vec::new();
    let order = writes
        .iter()
        .enumerate()
        .filter(|(_, w)| w.after.is_some())
        .chain(writes.iter().enumerate().filter(|(_, w)| w.after.is_none()));
    for (i, w) in order {
        if let Err(e) = step(fs, w, i, &mut done) {
            return rollback(fs, writes, done, format!("{}: {e}", w.path.as_str()));
        }
    }
    fs.written();
    for w in writes {
        match fs.version(&w.path) {
            Ok(v) if v == w.after_version() => {}
            Ok(v) => {
                let failure = format!(
                    "verification failed: {} is {v} after writing, the plan says {}",
                    w.path.as_str(),
                    w.after_version()
                );
                return rollback(fs, writes, done, failure);
            }
            Err(e) => return rollback(fs, writes, done, format!("verification failed: {e}")),
        }
    }
    ApplyOutcome::Applied
}

fn step(fs: &dyn PatchFs, w: &PlannedWrite, i: usize, done: &mut Vec<Done>) -> Result<(), FsError> {
    match &w.after {
        Some(bytes) => {
            // Record which ancestors are new, so a rollback removes exactly those.
            let mut missing = Vec::new();
            let mut prefix = String::new();
            let comps: Vec<&str> = w.path.components().collect();
            for c in &comps[..comps.len().saturating_sub(1)] {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(c);
                let p = WorkspacePath::parse(&prefix)?;
                if !fs.exists(&p)? {
                    missing.push(p);
                }
            }
            if let Some(deepest) = missing.last() {
                fs.create_dirs(deepest)?;
                done.extend(missing.into_iter().map(Done::MadeDir));
            }
            let mode = if w.before.is_some() { None } else { w.mode };
            fs.write_atomic(&w.path, bytes, mode)?;
            done.push(Done::Wrote(i));
        }
        None => {
            fs.remove_file(&w.path)?;
            done.push(Done::Removed(i));
        }
    }
    Ok(())
}

fn rollback(
    fs: &dyn PatchFs,
    writes: &[PlannedWrite],
    done: Vec<Done>,
    failure: String,
) -> ApplyOutcome {
    let mut unrestored = Vec::new();
    for d in done.into_iter().rev() {
        let (path, result) = match d {
            Done::Wrote(i) | Done::Removed(i) => {
                let w = &writes[i];
                let r = match &w.before {
                    Some(bytes) => fs
                        .write_atomic(&w.path, bytes, w.mode)
                        .and_then(|()| verify(fs, &w.path, &w.before_version())),
                    None => fs.remove_file(&w.path),
                };
                (w.path.as_str().to_owned(), r)
            }
            Done::MadeDir(p) => {
                let r = fs.remove_empty_dir(&p);
                (format!("{}/", p.as_str()), r)
            }
        };
        if result.is_err() {
            unrestored.push(path);
        }
    }
    if unrestored.is_empty() {
        ApplyOutcome::RolledBack { failure }
    } else {
        unrestored.reverse();
        ApplyOutcome::Partial { failure, unrestored }
    }
}

fn verify(fs: &dyn PatchFs, p: &WorkspacePath, want: &Version) -> Result<(), FsError> {
    let got = fs.version(p)?;
    if &got == want {
        Ok(())
    } else {
        Err(FsError::Io {
            path: p.as_str().to_owned(),
            op: "restore".into(),
            source: std::io::Error::other("restored content does not match the snapshot"),
        })
    }
}

mod recover;
mod revert;

pub use recover::{Found, InterruptedFile, Undone, put_back, roll_back, survey};
pub use revert::{Changed, RevertFile, RevertPlan, prepare_revert};

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests;
