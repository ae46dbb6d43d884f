//! Unit tests of a registry reload over the runner in this process: what it reports, that an
//! unchanged root is kept and a replaced one opened afresh, and that every refusal (a root
//! that cannot be opened, roots that nest once resolved, a root that holds a kept-out path) changes
//! nothing.
#![expect(clippy::disallowed_methods, reason = "tests build their fixtures on the host filesystem")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use codespace_policy::Registry;
use codespace_process::{Supervisor, SupervisorConfig};
use codespace_runner::ops;
use codespace_store::Store;

use crate::{Gateway, GatewayError, Reloaded, Workspaces};

fn workspaces(entries: serde_json::Value) -> Workspaces {
    let registry = Registry::parse(&serde_json::json!({ "workspaces": entries }).to_string());
    Workspaces::open(&registry.unwrap()).unwrap()
}

fn gateway(dir: &Path) -> Gateway {
    for id in ["a", "b", "c"] {
        std::fs::create_dir_all(dir.join(id)).unwrap();
    }
    let ws =
        workspaces(serde_json::json!({"a": {"root": dir.join("a")}, "b": {"root": dir.join("b")}}));
    let supervisor = Supervisor::new(SupervisorConfig::new(PathBuf::from("/nonexistent/reaper")));
    let runner = ws
        .local_runner(|roots| codespace_runner::LocalRunner::open(roots, supervisor, true))
        .unwrap();
    Gateway::for_tests(ws, runner, Arc::new(Store::open_in_memory().unwrap()), vec![])
}

async fn identity(gw: &Gateway, id: &str) -> Option<(u64, u64)> {
    gw.runner.run(ops::RootIdentity { ws: id.to_owned() }).await.unwrap()
}

/// What a gateway serves: each registered id with its root as the runner holds it.
fn served(gw: &Gateway) -> Vec<(String, Option<PathBuf>)> {
    gw.workspace_ids().into_iter().map(|id| (id.clone(), gw.runner.root_path(&id))).collect()
}

#[tokio::test]
async fn a_reload_adds_removes_changes_and_keeps_an_unchanged_root() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gw = gateway(d);
    let a_before = identity(&gw, "a").await;
    let next = workspaces(serde_json::json!({
        "a": {"root": d.join("a")},
        "b": {"root": d.join("b"), "profile": "workspace-write"},
        "c": {"root": d.join("c")},
    }));
    let done = gw.reload(next, vec![]).await.unwrap();
    let want =
        Reloaded { added: vec!["c".into()], changed: vec!["b".into()], ..Reloaded::default() };
    assert_eq!(done, want);
    assert_eq!(identity(&gw, "a").await, a_before, "an unchanged root is kept");
    assert!(gw.lookup("c").is_ok() && gw.runner.root_path("c").is_some());

    let done = gw.reload(workspaces(serde_json::json!({"c": {"root": d.join("c")}})), vec![]).await;
    assert_eq!(done.unwrap().removed, vec!["a".to_owned(), "b".to_owned()]);
    assert!(matches!(gw.lookup("a"), Err(GatewayError::WorkspaceNotFound { .. })));
    assert_eq!(gw.runner.root_path("a"), None, "the runner let the removed root go");
}

#[tokio::test]
async fn a_root_deleted_and_recreated_is_opened_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gw = gateway(d);
    let before = identity(&gw, "a").await;
    std::fs::remove_dir(d.join("a")).unwrap();
    std::fs::rename(d.join("c"), d.join("a")).unwrap();
    let same =
        workspaces(serde_json::json!({"a": {"root": d.join("a")}, "b": {"root": d.join("b")}}));
    let done = gw.reload(same, vec![]).await.unwrap();
    assert_eq!(done.reopened, vec!["a".to_owned()]);
    assert!(done.changed.is_empty(), "{done:?}");
    assert_ne!(identity(&gw, "a").await, before);
}

#[tokio::test]
async fn a_refused_reload_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gw = gateway(d);
    let before = served(&gw);
    std::fs::create_dir_all(d.join("b/inner")).unwrap();
    // Registered apart, nested once resolved.
    std::os::unix::fs::symlink(d.join("b/inner"), d.join("link")).unwrap();
    let refusals = [
        (serde_json::json!({"a": {"root": d.join("missing")}}), vec![], "workspaces.a.root"),
        (
            serde_json::json!({"c": {"root": d.join("c")}, "n": {"root": d.join("link")}, "b": {"root": d.join("b")}}),
            vec![],
            "workspaces.n.root",
        ),
        (
            serde_json::json!({"c": {"root": d.join("c")}}),
            vec![d.join("c/ledger.sqlite3")],
            "workspaces.c.root",
        ),
    ];
    for (entries, keep_out, key) in refusals {
        let e = gw.reload(workspaces(entries), keep_out).await.unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert_eq!(served(&gw), before, "{e}");
    }
}
