//! The MCP surface over stdio: identity, instructions, tool list and schemas, argument
//! decoding, workspace_info truthfulness, policy refusals.

use serde_json::json;

use crate::support::{Env, call, refused};

/// The reference's tools in its order, then this server's own.
const LIVE_TOOLS: &[&str] = &[
    "workspace_info",
    "read",
    "find",
    "apply_patch",
    "operation_status",
    "exec_command",
    "write_stdin",
    "read_process",
    "process_status",
    "process_resize",
    "terminate_process",
    "work_open",
    "steer_status",
    "steer_claim_next",
    "steer_complete",
    "work_finish",
    "approval_create",
    "approval_resolve",
    "operation_resume",
    "grep",
    "version",
    "changes",
    "operation_revert",
];

#[tokio::test]
async fn initialize_reports_identity_instructions_and_tools() {
    let mut env = Env::new();
    env.workspace("ro", json!({}));
    let client = env.stdio().await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "codespace");
    assert_eq!(info.server_info.as_ref().unwrap().version, env!("CARGO_PKG_VERSION"));
    let instructions = info.instructions.clone().unwrap_or_default();
    for phrase in [
        "workspace-relative",
        "sha256:",
        "next_offset",
        "listing_version",
        "incomplete",
        "PATH_ESCAPE",
        "OUTPUT_LIMIT",
        "SYMLINK_REJECTED",
        "not permission",
        "Claim user intents only at major checkpoints",
        "coordination",
    ] {
        assert!(instructions.contains(phrase), "instructions lack {phrase:?}");
    }
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, LIVE_TOOLS);
    for t in &tools {
        assert_eq!(t.input_schema.get("type"), Some(&json!("object")), "{}", t.name);
        let out =
            t.output_schema.as_ref().unwrap_or_else(|| panic!("{} lacks outputSchema", t.name));
        assert_eq!(out.get("type"), Some(&json!("object")), "{}", t.name);
        assert!(t.description.as_ref().is_some_and(|d| d.len() > 20));
    }
    let read = tools.iter().find(|t| t.name == "read").unwrap();
    let props = read.input_schema.get("properties").unwrap();
    for field in ["workspace_id", "path", "offset", "limit"] {
        assert!(props.get(field).is_some(), "read schema lacks {field}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn workspace_info_tells_the_truth() {
    let mut env = Env::new();
    let ro_root = env.workspace("ro", json!({}));
    env.workspace(
        "ww",
        json!({"profile": "workspace-write", "network": "enabled", "approvals": "confirm"}),
    );
    env.workspace("plain", json!({"profile": "workspace-write"}));
    env.workspace("off", json!({"profile": "workspace-write", "sandbox": "off"}));
    env.raw_workspace(
        "boxed",
        json!({"root": "/nonexistent/container/root", "environment": "box"}),
    );
    let client = env.stdio().await;

    let bare = call(&client, "workspace_info", json!({})).await.unwrap();
    assert_eq!(bare["server"], "codespace");
    assert_eq!(bare["internal_model_calls"], false);
    assert_eq!(bare["workspace_id_is_credential"], false);
    assert_eq!(bare["tools_exposed"], json!(LIVE_TOOLS));
    assert_eq!(bare["transports"], json!(["stdio", "streamable-http"]));
    assert!(bare.get("execution").is_none());
    assert_eq!(
        call(&client, "workspace_info", json!({"workspace_id": ""})).await.unwrap()["workspace_id"],
        json!(null)
    );

    let ro = call(&client, "workspace_info", json!({"workspace_id": "ro"})).await.unwrap();
    assert_eq!(ro["profile"], "read-only");
    assert_eq!(ro["root"], std::fs::canonicalize(&ro_root).unwrap().display().to_string());
    let ex = &ro["execution"];
    assert_eq!(ex["permissions"], json!({"read": true, "write": false, "exec": false}));
    assert_eq!(ex["files"]["read"]["available"], true);
    assert_eq!(ex["files"]["grep"]["available"], true);
    assert_eq!(ex["files"]["patch"]["available"], false);
    assert_eq!(ex["files"]["capabilities"]["read_max_bytes"], 1048576);
    assert_eq!(ex["files"]["capabilities"]["find_max_paths"], 10000);
    assert_eq!(ex["process"]["available"], false, "read-only: no exec");
    // CI requires the sandbox (CODESPACE_REQUIRE_SANDBOX=1): sandbox=on is enforced here.
    assert_eq!(ex["isolation"]["command_sandbox"], "linux-sandbox");
    assert_eq!(ex["network"]["enforcement"], "enforced");
    assert_eq!(ex["network"]["client_may_escalate"], false);
    assert!(ex.get("environment_id").is_none() && ex.get("patch_supported").is_none());

    let ww = call(&client, "workspace_info", json!({"workspace_id": "ww"})).await.unwrap();
    let ex = &ww["execution"];
    assert_eq!(ex["permissions"], json!({"read": true, "write": true, "exec": true}));
    // approvals=confirm: patches and commands wait in holds, and still run once granted.
    assert_eq!(ex["files"]["patch"]["available"], true);
    assert_eq!(ex["process"]["available"], true);
    assert_eq!(ex["holds"]["required"], true);
    assert_eq!(ex["holds"]["security_boundary"], false);
    assert_eq!(ex["network"]["policy"], "enabled");
    assert_eq!(ex["network"]["enforcement"], "enforced");
    assert_eq!(ex["approvals"], "confirm");

    let plain = call(&client, "workspace_info", json!({"workspace_id": "plain"})).await.unwrap();
    assert_eq!(plain["execution"]["files"]["patch"]["available"], true);
    assert_eq!(
        plain["execution"]["process"]["available"], true,
        "sandbox=on and the sandbox is usable"
    );
    let off = call(&client, "workspace_info", json!({"workspace_id": "off"})).await.unwrap();
    assert_eq!(
        off["execution"]["isolation"]["command_sandbox"], "none",
        "sandbox=off is unconfined and says so"
    );
    assert_eq!(off["execution"]["network"]["enforcement"], "none");

    let boxed = call(&client, "workspace_info", json!({"workspace_id": "boxed"})).await.unwrap();
    let env_info = &boxed["execution"]["environment"];
    assert_eq!(env_info["kind"], "linux-container");
    assert_eq!(env_info["file_read_supported"], false);
    assert!(env_info["unavailable_reason"].as_str().unwrap().contains("not available"));
    assert_eq!(boxed["execution"]["files"]["read"]["available"], false);

    refused(&client, "workspace_info", json!({"workspace_id": "nope"}), "WORKSPACE_NOT_FOUND")
        .await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn unavailable_backend_and_unknown_workspace_are_refused_everywhere() {
    let mut env = Env::new();
    env.workspace("ro", json!({}));
    env.raw_workspace("boxed", json!({"root": "/nonexistent/container/root", "environment": "box", "profile": "workspace-write"}));
    let client = env.stdio().await;
    for (tool, args) in [
        ("read", json!({"workspace_id": "boxed", "path": "a"})),
        ("find", json!({"workspace_id": "boxed"})),
        ("grep", json!({"workspace_id": "boxed", "pattern": "x"})),
        ("version", json!({"workspace_id": "boxed", "paths": ["a"]})),
    ] {
        let body = refused(&client, tool, args.clone(), "UNAUTHORIZED").await;
        assert!(body["message"].as_str().unwrap().contains("unavailable"), "{body}");
        let mut unknown = args.clone();
        unknown["workspace_id"] = json!("ghost");
        refused(&client, tool, unknown, "WORKSPACE_NOT_FOUND").await;
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn arguments_outside_the_schema_grant_nothing() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::write(root.join("a.txt"), "a").unwrap();
    let client = env.stdio().await;
    // Claims of approval, escalation or another root are ignored: the outcome is the same.
    let r = call(
        &client,
        "read",
        json!({"workspace_id": "ro", "path": "a.txt", "approved": true, "profile": "workspace-write", "root": "/"}),
    )
    .await
    .unwrap();
    assert_eq!(r["content"], "a");
    refused(
        &client,
        "read",
        json!({"workspace_id": "ro", "path": "/etc/passwd", "approved": true}),
        "PATH_ESCAPE",
    )
    .await;
    let info = call(
        &client,
        "workspace_info",
        json!({"workspace_id": "ro", "network": true, "approved": true}),
    )
    .await
    .unwrap();
    assert_eq!(info["execution"]["permissions"]["write"], false);
    client.cancel().await.unwrap();
}
