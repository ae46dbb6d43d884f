//! Confirmation holds end to end (`approval_create`, `approval_resolve`,
//! `operation_resume`, APPROVAL_REQUIRED under `approvals: "confirm"`): the reference's
//! topics, restart durability of every state, concurrent resumes, a registry change between
//! grant and resume, and the operator CLI answering from another process.

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Client, Env, call, refused};

/// The error body of a failed call as the Python SDK scripts print it.
pub(crate) fn error_body(seen: &Value) -> Value {
    assert_eq!(seen["is_error"], true, "{seen}");
    serde_json::from_str(seen["text"].as_str().unwrap()).unwrap()
}

pub(crate) fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// A patch appending `line` after the file's first line `top`.
pub(crate) fn append(ws: &str, line: &str) -> Value {
    json!({"workspace_id": ws, "patch": patch(&format!("*** Update File: a.txt\n@@\n top\n+{line}\n"))})
}

/// A scratch area with workspace `c` (confirm) and `o` (off), each holding `a.txt`, and a
/// ledger file the CLI can open.
pub(crate) struct Holds {
    pub(crate) env: Env,
    pub(crate) db: PathBuf,
}

impl Holds {
    pub(crate) fn new() -> Holds {
        let mut env = Env::new();
        for (id, approvals) in [("c", "confirm"), ("o", "off")] {
            let root = env.workspace(
                id,
                json!({"profile": "workspace-write", "approvals": approvals, "sandbox": "off"}),
            );
            std::fs::write(root.join("a.txt"), "top\n").unwrap();
        }
        let db = env.path().join("ledger.sqlite3");
        Holds { env, db }
    }

    pub(crate) fn root(&self, id: &str) -> PathBuf {
        self.env.path().join("ws").join(id)
    }

    pub(crate) fn file(&self, id: &str) -> String {
        std::fs::read_to_string(self.root(id).join("a.txt")).unwrap()
    }

    pub(crate) async fn client(&self) -> Client {
        let db = self.db.display().to_string();
        self.env.stdio_with(&[("CODESPACE_OPERATIONS_DB", &db)]).await.0
    }

    /// The one hold's state, from the operator CLI.
    pub(crate) fn only_hold(&self) -> Value {
        let listed = self.cli(&["list", "--json"]);
        assert!(listed.status.success(), "{listed:?}");
        let rows: Value = serde_json::from_slice(&listed.stdout).unwrap();
        assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
        rows[0].clone()
    }

    /// Runs the Python SDK script `tests/interop/<script>` with `args` against this scratch
    /// area's ledger and state, a question's state expiring after `ttl_secs`: what it
    /// printed, as JSON.
    pub(crate) fn python(&self, script: &str, args: &[&str], ttl_secs: &str) -> Value {
        let python = crate::interop::tool("CODESPACE_PYTHON", "target/test-tools/venv/bin/python");
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop").join(script);
        let mut cmd = std::process::Command::new(&python);
        for name in crate::support::codespace_vars() {
            cmd.env_remove(name);
        }
        let out = cmd
            .arg(script)
            .args(args)
            .env("XDG_STATE_HOME", self.env.state())
            .env("RUST_LOG", "warn")
            .env("CODESPACE_OPERATIONS_DB", &self.db)
            .env("CODESPACE_ELICITATION_TIMEOUT_SECS", ttl_secs)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout.trim()).unwrap()
    }

    /// `codespace approvals <args> --operations-db <ledger>`.
    pub(crate) fn cli(&self, args: &[&str]) -> Output {
        let mut cmd = self.env.command();
        cmd.arg("approvals").args(args).arg("--operations-db").arg(&self.db);
        cmd.output().unwrap()
    }
}

fn id_of(v: &Value) -> String {
    v["approval_id"].as_str().unwrap_or_else(|| panic!("no approval_id in {v}")).to_owned()
}

async fn resolve(client: &Client, id: &str, decision: &str) -> Result<Value, Value> {
    call(client, "approval_resolve", json!({"approval_id": id, "decision": decision})).await
}

async fn resume(client: &Client, id: &str) -> Result<Value, Value> {
    call(client, "operation_resume", json!({"approval_id": id})).await
}

#[tokio::test]
async fn off_runs_at_once_and_an_explicit_hold_runs_only_when_granted() {
    let h = Holds::new();
    let client = h.client().await;
    call(&client, "apply_patch", append("o", "now")).await.unwrap();
    assert_eq!(h.file("o"), "top\nnow\n", "approvals=off applies at once");

    let args = json!({"tool": "apply_patch", "arguments": append("o", "held")});
    let created = call(&client, "approval_create", args.clone()).await.unwrap();
    assert_eq!(created["state"], "pending");
    assert!(id_of(&created).starts_with("appr-"));
    assert!(created["summary"].as_str().unwrap().contains("update a.txt (+1 -0)"), "{created}");
    let id = id_of(&created);
    assert_eq!(id_of(&call(&client, "approval_create", args).await.unwrap()), id, "reused");
    assert_eq!(h.file("o"), "top\nnow\n", "a hold runs nothing");

    let body =
        refused(&client, "operation_resume", json!({"approval_id": id}), "APPROVAL_CONFLICT").await;
    assert_eq!(body["approval_id"], id.as_str());
    assert!(body["message"].as_str().unwrap().contains("pending"), "{body}");
    assert_eq!(resolve(&client, &id, "grant").await.unwrap()["state"], "granted");
    let again = resolve(&client, &id, "deny").await.unwrap_err();
    assert_eq!(again["code"], "APPROVAL_CONFLICT");

    let resumed = resume(&client, &id).await.unwrap();
    assert_eq!(resumed["state"], "consumed");
    assert_eq!(resumed["apply_patch"]["status"], "applied");
    let op = resumed["apply_patch"]["operation_id"].clone();
    assert_eq!(h.file("o"), "top\nheld\nnow\n");
    let replay = resume(&client, &id).await.unwrap();
    assert_eq!(replay["apply_patch"]["operation_id"], op, "a later resume returns the same result");
    assert_eq!(h.file("o"), "top\nheld\nnow\n", "written once");
    let status = call(&client, "operation_status", json!({"operation_id": op})).await.unwrap();
    assert_eq!(status["status"], "applied");
    refused(&client, "operation_resume", json!({"approval_id": "appr-nope"}), "APPROVAL_NOT_FOUND")
        .await;
    refused(
        &client,
        "approval_resolve",
        json!({"approval_id": "appr-nope", "decision": "grant"}),
        "APPROVAL_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn confirm_holds_a_patch_until_granted_then_writes_once() {
    let h = Holds::new();
    let client = h.client().await;
    let body = refused(&client, "apply_patch", append("c", "x"), "APPROVAL_REQUIRED").await;
    let id = id_of(&body);
    assert!(body["message"].as_str().unwrap().contains("update a.txt"), "{body}");
    assert_eq!(h.file("c"), "top\n", "nothing ran");
    let retry = refused(&client, "apply_patch", append("c", "x"), "APPROVAL_REQUIRED").await;
    assert_eq!(id_of(&retry), id, "the same request reuses its hold");
    // A key does not make it another request (the fingerprint leaves it out).
    let mut keyed = append("c", "x");
    keyed["operation_key"] = json!("k-1");
    assert_eq!(
        id_of(&refused(&client, "apply_patch", keyed.clone(), "APPROVAL_REQUIRED").await),
        id
    );

    // A preview writes nothing and is never held.
    let mut preview = append("c", "x");
    preview["check_only"] = json!(true);
    assert_eq!(call(&client, "apply_patch", preview).await.unwrap()["status"], "checked");

    let info = call(&client, "workspace_info", json!({"workspace_id": "c"})).await.unwrap();
    let holds = &info["execution"]["holds"];
    assert_eq!(
        (holds["required"].clone(), holds["security_boundary"].clone()),
        (json!(true), json!(false))
    );
    assert!(holds["note"].as_str().unwrap().contains("not a security boundary"), "{holds}");
    assert_eq!(info["execution"]["approvals"], "confirm");
    assert_eq!(info["execution"]["files"]["patch"]["available"], true);

    resolve(&client, &id, "grant").await.unwrap();
    let done = resume(&client, &id).await.unwrap();
    assert_eq!(done["apply_patch"]["status"], "applied");
    assert_eq!(h.file("c"), "top\nx\n");
    let replay = resume(&client, &id).await.unwrap();
    assert_eq!(replay["apply_patch"]["operation_id"], done["apply_patch"]["operation_id"]);
    assert_eq!(h.file("c"), "top\nx\n", "written once");
    // Consumed: the same request now opens a new hold.
    let next = refused(&client, "apply_patch", append("c", "x"), "APPROVAL_REQUIRED").await;
    assert_ne!(id_of(&next), id);
}

#[tokio::test]
async fn deny_is_final_and_read_only_creates_no_hold() {
    let mut h = Holds::new();
    h.env.workspace("r", json!({"profile": "read-only", "approvals": "confirm"}));
    let client = h.client().await;
    let id = id_of(&refused(&client, "apply_patch", append("c", "no"), "APPROVAL_REQUIRED").await);
    assert_eq!(resolve(&client, &id, "deny").await.unwrap()["state"], "denied");
    let body = resume(&client, &id).await.unwrap_err();
    assert_eq!(body["code"], "APPROVAL_DENIED");
    assert!(body["message"].as_str().unwrap().contains("denied"), "{body}");
    assert_eq!(resolve(&client, &id, "grant").await.unwrap_err()["code"], "APPROVAL_CONFLICT");
    assert_eq!(h.file("c"), "top\n");

    // Policy first: a denied action is UNAUTHORIZED and creates no row; extra fields grant
    // nothing.
    let mut args = append("r", "x");
    args["profile"] = json!("workspace-write");
    refused(
        &client,
        "approval_create",
        json!({"tool": "apply_patch", "arguments": args.clone()}),
        "UNAUTHORIZED",
    )
    .await;
    refused(&client, "apply_patch", args, "UNAUTHORIZED").await;
    let exec = json!({"workspace_id": "r", "command": ["true"]});
    refused(
        &client,
        "approval_create",
        json!({"tool": "exec_command", "arguments": exec}),
        "UNAUTHORIZED",
    )
    .await;
    let listed = h.cli(&["list", "--workspace", "r", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    assert_eq!(serde_json::from_slice::<Value>(&listed.stdout).unwrap(), json!([]));

    // Arguments are decoded as the named tool decodes them.
    let bad = |tool: &str, arguments: Value| json!({"tool": tool, "arguments": arguments});
    refused(
        &client,
        "approval_create",
        bad("apply_patch", json!({"workspace_id": "c"})),
        "INVALID_PATCH",
    )
    .await;
    refused(
        &client,
        "approval_create",
        bad("apply_patch", json!({"workspace_id": "c", "patch": "garbage"})),
        "INVALID_PATCH",
    )
    .await;
    refused(
        &client,
        "approval_create",
        bad("exec_command", json!({"workspace_id": "c", "command": []})),
        "INVALID_COMMAND",
    )
    .await;
    refused(
        &client,
        "approval_create",
        bad("exec_command", json!({"workspace_id": "c"})),
        "INVALID_COMMAND",
    )
    .await;
    refused(&client, "approval_create", bad("read", json!({})), "INVALID_ARGUMENTS").await;
    refused(
        &client,
        "approval_create",
        bad("apply_patch", append("nope", "x")),
        "WORKSPACE_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn an_exec_hold_spawns_once_however_often_it_is_asked() {
    let h = Holds::new();
    let client = h.client().await;
    let exec = json!({"workspace_id": "c", "command": ["sh", "-c", "echo run >> count.txt"]});
    let id = id_of(&refused(&client, "exec_command", exec.clone(), "APPROVAL_REQUIRED").await);
    assert_eq!(
        id_of(&refused(&client, "exec_command", exec.clone(), "APPROVAL_REQUIRED").await),
        id
    );
    assert!(!h.root("c").join("count.txt").exists(), "nothing spawned");
    let info = call(&client, "workspace_info", json!({"workspace_id": "c"})).await.unwrap();
    assert_eq!(info["execution"]["process"]["available"], true);
    resolve(&client, &id, "grant").await.unwrap();
    let first = resume(&client, &id).await.unwrap();
    let pid = first["exec_command"]["process_id"].clone();
    assert_eq!(first["exec_command"]["dispatch_status"], "confirmed");
    let status = call(&client, "process_status", json!({"process_id": pid, "wait_ms": 10_000}))
        .await
        .unwrap();
    assert_eq!(status["exit_code"], 0, "{status}");
    for _ in 0..3 {
        assert_eq!(resume(&client, &id).await.unwrap()["exec_command"]["process_id"], pid);
    }
    assert_eq!(std::fs::read_to_string(h.root("c").join("count.txt")).unwrap(), "run\n");
}

/// 20 resumes of one granted hold at once, over one connection: exactly one runs; every
/// success names the same operation, the rest are told a resume is running.
#[tokio::test]
async fn twenty_concurrent_resumes_run_the_hold_once() {
    let h = Holds::new();
    let client = h.client().await;
    let id =
        id_of(&refused(&client, "apply_patch", append("c", "once"), "APPROVAL_REQUIRED").await);
    resolve(&client, &id, "grant").await.unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let peer = client.peer().clone();
        let id = id.clone();
        tasks.spawn(async move {
            let args = json!({"approval_id": id});
            let Value::Object(map) = args else { unreachable!() };
            let r = peer
                .call_tool(
                    rmcp::model::CallToolRequestParams::new("operation_resume").with_arguments(map),
                )
                .await
                .unwrap();
            crate::support::tool_outcome(r)
        });
    }
    let mut ops = std::collections::BTreeSet::new();
    let mut conflicts = 0;
    while let Some(r) = tasks.join_next().await {
        match r.unwrap() {
            Ok(v) => {
                ops.insert(v["apply_patch"]["operation_id"].as_str().unwrap().to_owned());
            }
            Err(body) => {
                assert_eq!(body["code"], "APPROVAL_CONFLICT", "{body}");
                conflicts += 1;
            }
        }
    }
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert!(conflicts < 20);
    assert_eq!(h.file("c"), "top\nonce\n", "applied exactly once");
}

/// Every state survives a restart, and each behaves as before it.
#[tokio::test]
async fn every_hold_state_survives_a_restart() {
    let h = Holds::new();
    let (pending, granted, denied, consumed, op) = {
        let client = h.client().await;
        let p =
            id_of(&refused(&client, "apply_patch", append("c", "p"), "APPROVAL_REQUIRED").await);
        let g =
            id_of(&refused(&client, "apply_patch", append("c", "g"), "APPROVAL_REQUIRED").await);
        let d =
            id_of(&refused(&client, "apply_patch", append("c", "d"), "APPROVAL_REQUIRED").await);
        let c =
            id_of(&refused(&client, "apply_patch", append("c", "c"), "APPROVAL_REQUIRED").await);
        resolve(&client, &g, "grant").await.unwrap();
        resolve(&client, &d, "deny").await.unwrap();
        resolve(&client, &c, "grant").await.unwrap();
        let done = resume(&client, &c).await.unwrap();
        client.cancel().await.unwrap();
        (p, g, d, c, done["apply_patch"]["operation_id"].clone())
    };
    let client = h.client().await;
    for (id, state) in
        [(&pending, "pending"), (&granted, "granted"), (&denied, "denied"), (&consumed, "consumed")]
    {
        let shown = h.cli(&["show", id]);
        assert!(shown.status.success(), "{shown:?}");
        let v: Value = serde_json::from_slice(&shown.stdout).unwrap();
        assert_eq!(v["state"], state, "{v}");
    }
    assert_eq!(
        id_of(&refused(&client, "apply_patch", append("c", "p"), "APPROVAL_REQUIRED").await),
        pending
    );
    assert_eq!(resume(&client, &consumed).await.unwrap()["apply_patch"]["operation_id"], op);
    assert_eq!(resume(&client, &denied).await.unwrap_err()["code"], "APPROVAL_DENIED");
    assert_eq!(resume(&client, &granted).await.unwrap()["apply_patch"]["status"], "applied");
    assert_eq!(h.file("c"), "top\ng\nc\n");
}

/// The policy is checked again at resume, against the registry as it is then.
#[tokio::test]
async fn a_workspace_made_read_only_after_the_grant_refuses_the_resume() {
    let mut h = Holds::new();
    let id = {
        let client = h.client().await;
        let id =
            id_of(&refused(&client, "apply_patch", append("c", "x"), "APPROVAL_REQUIRED").await);
        resolve(&client, &id, "grant").await.unwrap();
        client.cancel().await.unwrap();
        id
    };
    h.env.workspace("c", json!({"profile": "read-only", "approvals": "confirm"}));
    let client = h.client().await;
    let body = resume(&client, &id).await.unwrap_err();
    assert_eq!(body["code"], "UNAUTHORIZED", "{body}");
    assert_eq!(body["approval_id"], id.as_str());
    assert_eq!(h.file("c"), "top\n", "nothing written");
    // Stored as the hold's terminal result.
    assert_eq!(resume(&client, &id).await.unwrap_err()["code"], "UNAUTHORIZED");
}

#[tokio::test]
async fn the_operator_cli_grants_a_hold_that_the_client_then_resumes() {
    let h = Holds::new();
    let client = h.client().await;
    let id = id_of(&refused(&client, "apply_patch", append("c", "cli"), "APPROVAL_REQUIRED").await);
    let listed = h.cli(&["list", "--state", "pending", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let rows: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(rows[0]["approval_id"], id.as_str(), "{rows}");
    assert!(rows[0]["summary"].as_str().unwrap().contains("update a.txt (+1 -0)"), "{rows}");
    let text = h.cli(&["list"]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains(&format!("{id}\tpending\tc\tapply_patch"))
    );

    let granted = h.cli(&["grant", &id]);
    assert!(granted.status.success(), "{granted:?}");
    assert!(String::from_utf8_lossy(&granted.stdout).contains("granted"));
    assert_eq!(resume(&client, &id).await.unwrap()["apply_patch"]["status"], "applied");
    assert_eq!(h.file("c"), "top\ncli\n");
    let again = h.cli(&["deny", &id]);
    assert_eq!(again.status.code(), Some(3), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("no longer pending"), "{again:?}");
    assert_eq!(h.cli(&["grant", "appr-missing"]).status.code(), Some(3));
    let shown: Value = serde_json::from_slice(&h.cli(&["show", &id]).stdout).unwrap();
    assert_eq!(shown["state"], "consumed");
    assert_eq!(shown["arguments"], Value::Null, "consumed holds are scrubbed");
    assert_eq!(shown["result"]["outcome"], "success");
}

/// A resume refused for a busy workspace leaves the hold queued, and a later resume runs it.
#[tokio::test]
async fn a_busy_workspace_leaves_the_hold_queued_to_retry() {
    let h = Holds::new();
    let client = h.client().await;
    let sleeper = json!({"workspace_id": "c", "command": ["sleep", "30"]});
    let exec = id_of(&refused(&client, "exec_command", sleeper, "APPROVAL_REQUIRED").await);
    resolve(&client, &exec, "grant").await.unwrap();
    let pid = resume(&client, &exec).await.unwrap()["exec_command"]["process_id"].clone();

    let id =
        id_of(&refused(&client, "apply_patch", append("c", "later"), "APPROVAL_REQUIRED").await);
    resolve(&client, &id, "grant").await.unwrap();
    let busy = resume(&client, &id).await.unwrap_err();
    assert_eq!(busy["code"], "WORKSPACE_BUSY", "{busy}");
    let shown: Value = serde_json::from_slice(&h.cli(&["show", &id]).stdout).unwrap();
    assert_eq!(shown["state"], "queued", "{shown}");
    assert!(shown["arguments"].is_object(), "a queued hold keeps its arguments: {shown}");
    assert_eq!(h.file("c"), "top\n");

    call(&client, "terminate_process", json!({"process_id": pid})).await.unwrap();
    call(&client, "process_status", json!({"process_id": pid, "wait_ms": 10_000})).await.unwrap();
    let mut done = resume(&client, &id).await;
    for _ in 0..50 {
        // The lease is released once the reaper has seen the whole tree exit.
        if done.as_ref().is_err_and(|b| b["code"] == "WORKSPACE_BUSY") {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            done = resume(&client, &id).await;
        }
    }
    assert_eq!(done.unwrap()["apply_patch"]["status"], "applied");
    assert_eq!(h.file("c"), "top\nlater\n");
}
