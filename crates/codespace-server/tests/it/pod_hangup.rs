//! SIGHUP through the real binary, with the runner in process and in a worker: under one
//! live session the registry reload adds a workspace (served and watched at once), changes
//! one (its new profile applies to the next call), removes one (its calls answer
//! `WORKSPACE_NOT_FOUND`; its running command runs on and is still reached by id), reopens a
//! root deleted and re-created, and a bad file, or a root that cannot be opened, is refused
//! with its reason while the server serves the registry it had. SIGHUP never ends it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Client, Env, HttpServer, call, refused};

const TOKEN: &str = "hangup-token";
const WAIT: Duration = Duration::from_secs(20);

fn hang_up(server: &HttpServer) {
    let pid = rustix::process::Pid::from_raw(server.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
}

/// Sends SIGHUP and waits for the log line that says how it went.
fn reload(server: &mut HttpServer, outcome: &str) {
    hang_up(server);
    server.wait_for_stderr(outcome, WAIT);
    assert!(server.child.try_wait().unwrap().is_none(), "SIGHUP ended the server");
}

fn add_file(path: &str, line: &str) -> String {
    format!("*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\n")
}

async fn patch(client: &Client, ws: &str, path: &str) -> Result<Value, Value> {
    call(client, "apply_patch", json!({"workspace_id": ws, "patch": add_file(path, "x")})).await
}

async fn reload_under_a_live_session(extra: &[&str]) {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    env.workspace("gone", json!({"profile": "workspace-write", "sandbox": "off"}));
    let mut args = vec!["--token", TOKEN];
    args.extend_from_slice(extra);
    let mut server = env.http(&args);
    let client = server.client(Some(TOKEN)).await;
    patch(&client, "w", "before.txt").await.unwrap();
    let sleeper = call(
        &client,
        "exec_command",
        json!({"workspace_id": "gone", "command": ["sleep", "60"], "timeout_secs": 90}),
    )
    .await
    .unwrap();
    let pid = sleeper["process_id"].as_str().unwrap().to_owned();

    // Added, changed (read-only now) and removed, in one reload.
    env.workspaces_mut().remove("gone");
    env.workspaces_mut().get_mut("w").unwrap()["profile"] = json!("read-only");
    let added = env.workspace("added", json!({"profile": "workspace-write", "sandbox": "off"}));
    env.config();
    refused(&client, "workspace_info", json!({"workspace_id": "added"}), "WORKSPACE_NOT_FOUND")
        .await;
    reload(&mut server, "the registry is applied");

    // The added workspace is served, and watched: a patch shows in `changes`.
    let start = call(&client, "changes", json!({"workspace_id": "added"})).await.unwrap();
    patch(&client, "added", "new.txt").await.unwrap();
    assert_eq!(std::fs::read_to_string(added.join("new.txt")).unwrap(), "x\n");
    let since = json!({"workspace_id": "added", "since": start["cursor"]});
    let seen = call(&client, "changes", since).await.unwrap();
    assert_eq!(seen["resync_required"], false, "{seen}");
    let paths: Vec<&Value> =
        seen["changes"].as_array().unwrap().iter().map(|c| &c["path"]).collect();
    assert!(paths.contains(&&json!("new.txt")), "{seen}");
    // The changed one takes its new profile; it still reads.
    refused(
        &client,
        "apply_patch",
        json!({"workspace_id": "w", "patch": add_file("after.txt", "x")}),
        "UNAUTHORIZED",
    )
    .await;
    call(&client, "read", json!({"workspace_id": "w", "path": "before.txt"})).await.unwrap();
    // The removed one is unknown; its command runs on, reached by id, until it is ended.
    for tool in ["workspace_info", "read"] {
        let args = json!({"workspace_id": "gone", "path": "x"});
        let args = if tool == "read" { args } else { json!({"workspace_id": "gone"}) };
        refused(&client, tool, args, "WORKSPACE_NOT_FOUND").await;
    }
    let status = call(&client, "process_status", json!({"process_id": pid})).await.unwrap();
    assert_eq!(status["state"], "running", "{status}");
    call(&client, "terminate_process", json!({"process_id": pid})).await.unwrap();
    let ended =
        call(&client, "process_status", json!({"process_id": pid, "wait_ms": 10_000})).await;
    assert_eq!(ended.unwrap()["state"], "exited");

    // A root deleted and re-created answers ROOT_REPLACED until a reload reopens it.
    std::fs::remove_dir_all(&added).unwrap();
    std::fs::create_dir_all(&added).unwrap();
    std::fs::write(added.join("fresh.txt"), "fresh\n").unwrap();
    let fresh = json!({"workspace_id": "added", "path": "fresh.txt"});
    refused(&client, "read", fresh.clone(), "ROOT_REPLACED").await;
    reload(&mut server, "the registry is applied");
    let read = call(&client, "read", fresh.clone()).await.unwrap();
    assert!(read.to_string().contains("fresh"), "{read}");

    // A bad file, and a root that cannot be opened, are refused: nothing changes.
    std::fs::write(env.path().join("registry.json"), "{ not json").unwrap();
    reload(&mut server, "the registry is refused");
    env.workspace("missing", json!({"profile": "read-only"}));
    std::fs::remove_dir(env.path().join("ws/missing")).unwrap();
    env.config();
    reload(&mut server, "workspaces.missing.root");
    call(&client, "read", fresh).await.unwrap();
    refused(&client, "workspace_info", json!({"workspace_id": "missing"}), "WORKSPACE_NOT_FOUND")
        .await;
    refused(&client, "workspace_info", json!({"workspace_id": "gone"}), "WORKSPACE_NOT_FOUND")
        .await;
}

#[tokio::test]
async fn sighup_reloads_the_registry_under_a_live_session_in_process() {
    reload_under_a_live_session(&["--runner", "in-process"]).await;
}

#[tokio::test]
async fn sighup_reloads_the_registry_under_a_live_session_with_a_worker() {
    reload_under_a_live_session(&["--runner", "uds"]).await;
}
