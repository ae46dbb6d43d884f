//! SIGHUP through the real binary: the registry is read and checked again while a session
//! stays up; a valid change is named in the log as not applied yet (the server keeps
//! serving the registry it started with, until a restart), a bad file is refused with its
//! reason, and the server never ends on SIGHUP.

use std::time::Duration;

use serde_json::json;

use crate::support::{Env, call, refused};

const TOKEN: &str = "hangup-token";

fn hang_up(pid: u32) {
    let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
}

#[tokio::test]
async fn sighup_checks_the_registry_again_keeps_serving_and_names_what_it_did_not_apply() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    let mut server = env.http(&["--token", TOKEN]);
    let client = server.client(Some(TOKEN)).await;
    call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();

    // A valid change: added and removed workspaces are named, none is served yet.
    env.workspaces_mut().remove("w");
    env.workspace("added", json!({"profile": "read-only"}));
    env.config();
    hang_up(server.child.id());
    server.wait_for_stderr("not applied", Duration::from_secs(20));
    assert!(server.child.try_wait().unwrap().is_none(), "SIGHUP ended the server");
    call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
    refused(&client, "workspace_info", json!({"workspace_id": "added"}), "WORKSPACE_NOT_FOUND")
        .await;

    // A bad file is refused with its reason; the session goes on.
    std::fs::write(env.path().join("registry.json"), "{ not json").unwrap();
    hang_up(server.child.id());
    server.wait_for_stderr("the registry is refused", Duration::from_secs(20));
    assert!(server.child.try_wait().unwrap().is_none(), "SIGHUP ended the server");
    call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
}
