//! Shared fixtures: temp ledgers, plans, and a `fresh` helper.

use std::path::PathBuf;

use codespace_store::{Begin, ChangeKind, PlannedFile, Store, Version};

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

/// `begin` that must mint; returns the id.
pub(crate) fn fresh(
    store: &Store,
    workspace: &str,
    key: Option<&str>,
    fingerprint: &str,
) -> String {
    match store.begin(workspace, key, fingerprint, 100).unwrap() {
        Begin::Fresh { operation_id } => operation_id,
        other => panic!("expected Fresh, got {other:?}"),
    }
}
