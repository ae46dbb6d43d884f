//! Shared fixtures: temp ledgers, plans, and fresh and planned drafts.

use std::path::PathBuf;

use codespace_store::{ChangeKind, Draft, Drafted, PlannedFile, Store, Version};

/// A temp dir that lives as long as the value, and the ledger path inside it.
pub(crate) struct TempLedger {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) path: PathBuf,
}

impl TempLedger {
    pub(crate) fn new() -> TempLedger {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join("operations.sqlite3");
        TempLedger { dir, path }
    }

    pub(crate) fn open(&self) -> Store {
        Store::open(&self.path).unwrap()
    }
}

/// `sha256:` + 64 hex digits derived from `n`.
pub(crate) fn version(n: u64) -> Version {
    format!("sha256:{n:064x}").parse().unwrap()
}

/// A plan touching every kind, varied by `n`.
pub(crate) fn plan(n: u64) -> Vec<PlannedFile> {
    vec![
        PlannedFile {
            path: format!("src/new_{n}.rs"),
            kind: ChangeKind::Add,
            before_version: Version::Absent,
            after_version: version(n * 4 + 1),
            move_from: None,
            before_mode: None,
        },
        PlannedFile {
            path: "src/lib.rs".to_owned(),
            kind: ChangeKind::Update,
            before_version: version(n * 4 + 2),
            after_version: version(n * 4 + 3),
            move_from: None,
            before_mode: None,
        },
        PlannedFile {
            path: "docs/gone.md".to_owned(),
            kind: ChangeKind::Delete,
            before_version: version(n * 4 + 4),
            after_version: Version::Absent,
            move_from: None,
            before_mode: None,
        },
        PlannedFile {
            path: format!("src/moved_{n}.rs"),
            kind: ChangeKind::Move,
            before_version: version(n * 4 + 5),
            after_version: version(n * 4 + 6),
            move_from: Some("src/old.rs".to_owned()),
            before_mode: None,
        },
    ]
}

/// A fresh draft (minted at 100); panics on a replay or a conflict.
pub(crate) fn draft(store: &Store, workspace: &str, key: Option<&str>, fingerprint: &str) -> Draft {
    match store.draft(None, workspace, key, fingerprint, 100).unwrap() {
        Drafted::Fresh(draft) => draft,
        other => panic!("expected a fresh draft, got {other:?}"),
    }
}

/// A fresh draft written to the ledger with `plan(n)` at 110 (an `applying` row whose key no
/// other request took first); returns the draft.
pub(crate) fn planned(
    store: &Store,
    workspace: &str,
    key: Option<&str>,
    fingerprint: &str,
    n: u64,
) -> Draft {
    let draft = draft(store, workspace, key, fingerprint);
    assert_eq!(store.plan_draft(&draft, &plan(n), &[], 110).unwrap(), None, "planned first");
    draft
}
