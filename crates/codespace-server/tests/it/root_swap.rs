//! A workspace root replaced while the server runs (by a symlink, or deleted and re-created
//! as a fresh clone would be): every file tool and `exec_command` answers `ROOT_REPLACED`,
//! nothing is read from or written into either directory, and `workspace_info` reports the
//! replaced root.

use serde_json::json;

use crate::support::{Env, call, refused};

/// Every file tool and `exec_command` on `ws` answers `ROOT_REPLACED`, naming the restart.
async fn every_tool_refuses(client: &crate::support::Client) {
    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-original\n+patched\n*** End Patch\n";
    let calls = [
        ("read", json!({"workspace_id": "ws", "path": "f.txt"})),
        ("find", json!({"workspace_id": "ws", "pattern": "*.txt"})),
        ("grep", json!({"workspace_id": "ws", "pattern": "original"})),
        ("changes", json!({"workspace_id": "ws"})),
        ("apply_patch", json!({"workspace_id": "ws", "patch": patch})),
        (
            "exec_command",
            json!({"workspace_id": "ws", "command": ["sh", "-c", "echo x > written.txt"]}),
        ),
    ];
    for (tool, args) in calls {
        let e = refused(client, tool, args, "ROOT_REPLACED").await;
        let message = e["message"].as_str().unwrap();
        assert!(message.contains("restart the server"), "{tool}: {e}");
    }
}

/// Registers `ws` with `sandbox`, replaces its root by a symlink to another directory once
/// the server runs, and tries every tool there.
async fn tools_after_root_swap(sandbox: &str) {
    let mut env = Env::new();
    let root = env.workspace("ws", json!({"profile": "workspace-write", "sandbox": sandbox}));
    std::fs::write(root.join("f.txt"), "original\n").unwrap();
    let elsewhere = env.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("f.txt"), "elsewhere\n").unwrap();
    let client = env.stdio().await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "ws"})).await.unwrap();
    assert_eq!(info["root_status"], "current", "{info}");
    call(&client, "read", json!({"workspace_id": "ws", "path": "f.txt"})).await.unwrap();

    let moved = root.with_file_name("ws.moved");
    std::fs::rename(&root, &moved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &root).unwrap();

    every_tool_refuses(&client).await;
    assert!(!moved.join("written.txt").exists(), "sandbox={sandbox}: written in the old root");
    assert!(!elsewhere.join("written.txt").exists(), "sandbox={sandbox}: wrote elsewhere");
    assert_eq!(std::fs::read_to_string(moved.join("f.txt")).unwrap(), "original\n");
    assert_eq!(std::fs::read_to_string(elsewhere.join("f.txt")).unwrap(), "elsewhere\n");

    let info = call(&client, "workspace_info", json!({"workspace_id": "ws"})).await.unwrap();
    assert_eq!(info["root_status"], "replaced", "{info}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_replaced_root_refuses_unsandboxed_commands_and_file_tools() {
    tools_after_root_swap("off").await;
}

#[tokio::test]
async fn a_replaced_root_refuses_sandboxed_commands_and_file_tools() {
    tools_after_root_swap("on").await;
}

/// The operator deletes the root and clones afresh into the same path: the files are
/// there, yet the server holds the deleted directory. Every tool says so instead of
/// answering `FILE_NOT_FOUND` or writing into the deleted directory.
#[tokio::test]
async fn a_root_deleted_and_recreated_answers_root_replaced() {
    let mut env = Env::new();
    let root = env.workspace("ws", json!({"profile": "workspace-write"}));
    std::fs::write(root.join("f.txt"), "original\n").unwrap();
    let client = env.stdio().await;
    call(&client, "read", json!({"workspace_id": "ws", "path": "f.txt"})).await.unwrap();

    std::fs::remove_dir_all(&root).unwrap();
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("f.txt"), "original\n").unwrap();

    every_tool_refuses(&client).await;
    assert_eq!(std::fs::read_to_string(root.join("f.txt")).unwrap(), "original\n");
    assert!(!root.join("written.txt").exists());
    let info = call(&client, "workspace_info", json!({"workspace_id": "ws"})).await.unwrap();
    assert_eq!(info["root_status"], "removed", "{info}");
    client.cancel().await.unwrap();
}
