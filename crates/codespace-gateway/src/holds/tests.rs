//! A granted hold resumed once the runner worker is gone: nothing ran, so the hold goes
//! back to `queued` (a later resume retries) instead of being consumed with the transport
//! error.
#![expect(clippy::disallowed_methods, reason = "tests build their fixtures on the host filesystem")]

use std::sync::Arc;
use std::time::Duration;

use codespace_policy::Registry;
use codespace_process::{Supervisor, SupervisorConfig};
use codespace_protocol::{
    ApplyPatchParams, ApprovalResolveParams, ApprovalState, Decision, ErrorCode,
    OperationResumeParams,
};
use codespace_runner::{Runner, SocketRunner, WorkerFaults};
use codespace_store::Store;

use crate::{Gateway, Workspaces};

/// A gateway whose runner is a worker (in this process, over a socket pair), and the
/// worker's task, which the test ends.
async fn gateway_with_a_worker(
    dir: &std::path::Path,
) -> (Gateway, Arc<Store>, tokio::task::AbortHandle) {
    std::fs::create_dir_all(dir.join("w")).unwrap();
    std::fs::write(dir.join("w/a.txt"), "old\n").unwrap();
    let registry = Registry::parse(
        &serde_json::json!({"workspaces": {
            "w": {"root": dir.join("w"), "profile": "workspace-write", "approvals": "confirm"},
        }})
        .to_string(),
    )
    .unwrap();
    let workspaces = Workspaces::open(&registry).unwrap();
    let (ours, theirs) = tokio::net::UnixStream::pair().unwrap();
    let supervisor =
        Supervisor::new(SupervisorConfig::new(std::path::PathBuf::from("/nonexistent/reaper")));
    let worker = tokio::spawn(codespace_runner::serve_worker(
        theirs,
        supervisor,
        "test".to_owned(),
        WorkerFaults::default(),
    ));
    let runner =
        SocketRunner::connect(ours, "test", &workspaces.host_roots(), false).await.unwrap();
    let store = Arc::new(Store::open_in_memory().unwrap());
    let gw = Gateway::for_tests(workspaces, Runner::Socket(runner), Arc::clone(&store), vec![]);
    (gw, store, worker.abort_handle())
}

#[tokio::test]
async fn a_resume_the_runner_could_not_take_leaves_the_hold_queued() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, store, worker) = gateway_with_a_worker(dir.path()).await;
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n";
    let p: ApplyPatchParams =
        serde_json::from_value(serde_json::json!({"workspace_id": "w", "patch": patch})).unwrap();
    let held = gw.apply_patch(p).await.unwrap_err().to_body();
    assert_eq!(held.code, ErrorCode::ApprovalRequired);
    let approval_id = held.approval_id.unwrap();
    let grant =
        ApprovalResolveParams { approval_id: approval_id.clone(), decision: Decision::Grant };
    gw.approval_resolve(grant).await.unwrap();
    // The worker goes away after the hold was made (which asked it for the root).
    worker.abort();
    let Runner::Socket(runner) = gw.runner().as_ref() else { panic!("a socket runner") };
    tokio::time::timeout(Duration::from_secs(5), runner.lost()).await.unwrap();
    for _ in 0..2 {
        let resume = OperationResumeParams { approval_id: approval_id.clone(), wait_ms: None };
        let e = gw.operation_resume(resume, std::future::pending()).await.unwrap_err().to_body();
        assert_eq!(e.code, ErrorCode::Timeout, "{}", e.message);
        assert!(e.message.contains("nothing ran"), "{}", e.message);
        let hold = store.hold(&approval_id).unwrap().unwrap();
        assert_eq!(hold.state, ApprovalState::Queued, "retryable, not consumed");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("w/a.txt")).unwrap(), "old\n");
}
