//! A workspace root replaced by a symlink while the server runs: commands stay in the
//! directory opened at start (sandboxed and unsandboxed), nothing is written where the
//! symlink points, and `workspace_info` reports the replaced root.

use serde_json::json;

use crate::process::{exec, output, wait_exit};
use crate::support::{Env, call};

/// Registers `ws` with `sandbox`, replaces its root by a symlink to another directory once
/// the server runs, and runs a command there.
async fn command_after_root_swap(sandbox: &str) {
    let mut env = Env::new();
    let root = env.workspace("ws", json!({"profile": "workspace-write", "sandbox": sandbox}));
    std::fs::write(root.join("f.txt"), "original\n").unwrap();
    let elsewhere = env.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("f.txt"), "elsewhere\n").unwrap();
    let client = env.stdio().await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "ws"})).await.unwrap();
    assert_eq!(info["root_status"], "current", "{info}");

    let moved = root.with_file_name("ws.moved");
    std::fs::rename(&root, &moved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &root).unwrap();

    let script = "pwd; cat f.txt; echo x > written.txt";
    let id = exec(&client, "ws", &["sh", "-c", script], false).await;
    let st = wait_exit(&client, &id).await;
    let out = output(&client, &id).await;
    assert_eq!(st["exit_code"], 0, "sandbox={sandbox}: {out}");
    assert!(out.contains("original"), "sandbox={sandbox}: read elsewhere: {out}");
    assert!(!out.contains("elsewhere"), "sandbox={sandbox}: followed the symlink: {out}");
    assert!(moved.join("written.txt").exists(), "sandbox={sandbox}: not written in the root");
    assert!(!elsewhere.join("written.txt").exists(), "sandbox={sandbox}: wrote elsewhere");

    let info = call(&client, "workspace_info", json!({"workspace_id": "ws"})).await.unwrap();
    assert_eq!(info["root_status"], "replaced", "{info}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_replaced_root_does_not_redirect_unsandboxed_commands() {
    command_after_root_swap("off").await;
}

#[tokio::test]
async fn a_replaced_root_does_not_redirect_sandboxed_commands() {
    command_after_root_swap("on").await;
}
