//! Transaction tests with injected faults: a failing write midway, a write that lands other
//! bytes than planned, a restore that fails too.

use std::cell::Cell;
use std::path::Path;

use super::*;

fn tree() -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a1\na2\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "b1\n").unwrap();
    std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    let root = Root::open(dir.path()).unwrap();
    (dir, root)
}

const PATCH: &str = "*** Begin Patch
*** Update File: a.txt
@@
-a1
+A1
*** Add File: new/deep/c.txt
+c
*** Delete File: gone.txt
*** Update File: b.txt
*** Move to: moved/b.txt
@@
-b1
+B1
*** End Patch
";

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(base).unwrap().display().to_string();
            if e.file_type().unwrap().is_dir() {
                out.push((format!("{rel}/"), Vec::new()));
                walk(base, &e.path(), out);
            } else {
                out.push((rel, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Fails the `fail_at`-th write or removal; optionally fails every restore too, or writes
/// other bytes than asked.
struct Faulty<'a> {
    root: &'a Root,
    calls: Cell<usize>,
    fail_at: usize,
    fail_restores: bool,
    corrupt: bool,
}

impl Faulty<'_> {
    fn tick(&self, path: &WorkspacePath) -> Result<(), FsError> {
        let n = self.calls.get() + 1;
        self.calls.set(n);
        if n == self.fail_at || (self.fail_restores && n > self.fail_at) {
            return Err(FsError::Io {
                path: path.as_str().to_owned(),
                op: "write".into(),
                source: std::io::Error::other("injected"),
            });
        }
        Ok(())
    }
}

impl PatchFs for Faulty<'_> {
    fn exists(&self, p: &WorkspacePath) -> Result<bool, FsError> {
        self.root.exists(p)
    }
    fn create_dirs(&self, p: &WorkspacePath) -> Result<(), FsError> {
        Root::create_dirs(self.root, p)
    }
    fn write_atomic(
        &self,
        p: &WorkspacePath,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Result<(), FsError> {
        self.tick(p)?;
        if self.corrupt && self.calls.get() == 1 {
            return Root::write_atomic(self.root, p, b"tampered\n", mode);
        }
        Root::write_atomic(self.root, p, bytes, mode)
    }
    fn remove_file(&self, p: &WorkspacePath) -> Result<(), FsError> {
        self.tick(p)?;
        Root::remove_file(self.root, p)
    }
    fn remove_empty_dir(&self, p: &WorkspacePath) -> Result<(), FsError> {
        Root::remove_empty_dir(self.root, p)
    }
    fn version(&self, p: &WorkspacePath) -> Result<Version, FsError> {
        Root::version(self.root, p)
    }
}

fn interrupted(writes: &[PlannedWrite]) -> Vec<InterruptedFile> {
    writes
        .iter()
        .map(|w| InterruptedFile {
            path: w.path.as_str().to_owned(),
            before: w.before_version(),
            after: w.after_version(),
            undo: w.before.clone(),
            mode: w.mode,
        })
        .collect()
}

#[test]
fn applies_all_changes_and_verifies() {
    let (dir, root) = tree();
    let writes = prepare(&root, PATCH).unwrap();
    assert_eq!(apply(&root, &writes), ApplyOutcome::Applied);
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "A1\na2\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("new/deep/c.txt")).unwrap(), "c\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("moved/b.txt")).unwrap(), "B1\n");
    assert!(!dir.path().join("gone.txt").exists() && !dir.path().join("b.txt").exists());
    assert!(survey(&root, &interrupted(&writes)).iter().all(|f| *f == Found::After));
}

#[test]
fn a_failure_at_every_step_rolls_back_to_the_exact_tree() {
    for fail_at in 1..=5 {
        let (dir, root) = tree();
        let before = snapshot(dir.path());
        let writes = prepare(&root, PATCH).unwrap();
        let fs = Faulty {
            root: &root,
            calls: Cell::new(0),
            fail_at,
            fail_restores: false,
            corrupt: false,
        };
        match apply(&fs, &writes) {
            ApplyOutcome::RolledBack { failure } => {
                assert!(failure.contains("injected"), "{failure}")
            }
            other => panic!("fail_at {fail_at}: {other:?}"),
        }
        assert_eq!(
            snapshot(dir.path()),
            before,
            "fail_at {fail_at}: tree restored, new dirs removed"
        );
        assert!(survey(&root, &interrupted(&writes)).iter().all(|f| *f == Found::Before));
    }
}

#[test]
fn a_verification_mismatch_restores_the_snapshot() {
    let (dir, root) = tree();
    let before = snapshot(dir.path());
    let writes = prepare(&root, PATCH).unwrap();
    let fs = Faulty {
        root: &root,
        calls: Cell::new(0),
        fail_at: usize::MAX,
        fail_restores: false,
        corrupt: true,
    };
    match apply(&fs, &writes) {
        ApplyOutcome::RolledBack { failure } => {
            assert!(failure.contains("verification failed"), "{failure}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_failed_restore_is_reported_as_partial() {
    let (dir, root) = tree();
    let writes = prepare(&root, PATCH).unwrap();
    let fs = Faulty {
        root: &root,
        calls: Cell::new(0),
        fail_at: 3,
        fail_restores: true,
        corrupt: false,
    };
    match apply(&fs, &writes) {
        ApplyOutcome::Partial { unrestored, .. } => {
            assert!(!unrestored.is_empty());
            assert!(unrestored.iter().any(|p| p == "a.txt"), "{unrestored:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "A1\na2\n");
}

#[test]
fn modes_are_kept_and_moves_carry_them() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, root) = tree();
    std::fs::set_permissions(dir.path().join("a.txt"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    std::fs::set_permissions(dir.path().join("b.txt"), std::fs::Permissions::from_mode(0o600))
        .unwrap();
    let writes = prepare(&root, PATCH).unwrap();
    assert_eq!(apply(&root, &writes), ApplyOutcome::Applied);
    let mode =
        |p: &str| std::fs::metadata(dir.path().join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("a.txt"), 0o755);
    assert_eq!(mode("moved/b.txt"), 0o600);
}

#[test]
fn hard_linked_targets_are_replaced_not_written_through() {
    let (dir, root) = tree();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "a1\na2\n").unwrap();
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    std::fs::hard_link(&victim, dir.path().join("a.txt")).unwrap();
    let writes = prepare(&root, PATCH).unwrap();
    assert_eq!(apply(&root, &writes), ApplyOutcome::Applied);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "a1\na2\n",
        "the outside inode is untouched"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "A1\na2\n");
}

#[test]
fn survey_tells_before_after_other_and_roll_back_restores_from_the_undo_copy() {
    let (dir, root) = tree();
    let v = |s: &str| Version::of_bytes(s.as_bytes());
    let file = |path: &str, before: &str, after: Option<&str>, undo: bool| InterruptedFile {
        path: path.to_owned(),
        before: v(before),
        after: after.map_or(Version::Absent, v),
        undo: undo.then(|| before.as_bytes().to_vec()),
        mode: Some(0o640),
    };
    let files = vec![
        file("a.txt", "a1\na2\n", Some("new\n"), true),
        file("b.txt", "b1\n", Some("B\n"), true),
        file("gone.txt", "bye\n", None, true),
        InterruptedFile {
            path: "sub/added.txt".to_owned(),
            before: Version::Absent,
            after: v("added\n"),
            undo: None,
            mode: None,
        },
    ];
    assert_eq!(
        survey(&root, &files),
        vec![Found::Before, Found::Before, Found::Before, Found::Before]
    );
    // Half-written: a.txt new, gone.txt gone (with its directory intact), the add landed.
    std::fs::write(dir.path().join("a.txt"), "new\n").unwrap();
    std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/added.txt"), "added\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "someone else\n").unwrap();
    let found = survey(&root, &files);
    assert_eq!(found[0], Found::After);
    assert_eq!(found[1], Found::Other(v("someone else\n")));
    assert_eq!(found[2], Found::After);
    assert_eq!(found[3], Found::After);
    let undone = roll_back(&root, &files, &found);
    assert_eq!(
        undone,
        vec![
            Undone::Restored,
            Undone::Taken(v("someone else\n")),
            Undone::Restored,
            Undone::Removed
        ]
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "a1\na2\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("gone.txt")).unwrap(), "bye\n");
    assert!(!dir.path().join("sub/added.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.path().join("b.txt")).unwrap(), "someone else\n");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("gone.txt")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[test]
fn a_missing_or_wrong_undo_copy_is_a_failure_not_a_guess() {
    let (dir, root) = tree();
    let v = |s: &str| Version::of_bytes(s.as_bytes());
    std::fs::write(dir.path().join("a.txt"), "new\n").unwrap();
    let mut f = InterruptedFile {
        path: "a.txt".to_owned(),
        before: v("a1\na2\n"),
        after: v("new\n"),
        undo: None,
        mode: None,
    };
    let found = survey(&root, std::slice::from_ref(&f));
    assert!(matches!(&roll_back(&root, std::slice::from_ref(&f), &found)[0], Undone::Failed(_)));
    f.undo = Some(b"not the old content".to_vec());
    assert!(matches!(&roll_back(&root, std::slice::from_ref(&f), &found)[0], Undone::Failed(_)));
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "new\n");
}
