//! Commands in their own world, end to end: the program looked up inside the sandbox (and
//! the hint when only a hidden directory has it), the workspace's `env` and time limits
//! with the argument clamp and the TIMEOUT code, `wait_ms` instead of polling, and the
//! limits `workspace_info` shows.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::process::{exec, output, wait_exit};
use crate::support::{Client, Env, call, refused};

/// A directory under a "home" the sandbox does not show, holding an executable script per
/// name; returns the directory.
fn hidden_bin(env: &Env, names: &[&str]) -> PathBuf {
    let dir = env.path().join("home/.pyenv/shims");
    std::fs::create_dir_all(&dir).unwrap();
    for name in names {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\necho from-the-hidden-shim\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// The server's PATH with `first` in front, as a pyenv or rustup install leaves it.
fn path_with(first: &Path) -> String {
    format!("{}:/usr/local/bin:/usr/bin:/bin", first.display())
}

#[tokio::test]
async fn a_sandboxed_program_is_found_among_the_directories_the_command_sees() {
    let mut env = Env::new();
    env.workspace("boxed", json!({"profile": "workspace-write"}));
    let shims = hidden_bin(&env, &["python3", "codespace-hidden-tool"]);
    env.workspace(
        "shown",
        json!({"profile": "workspace-write", "extra_read_roots": [shims.display().to_string()]}),
    );
    let path = path_with(&shims);
    let (client, _) = env.stdio_with(&[("PATH", &path)]).await;
    // The hidden shim comes first on PATH; the sandbox's own python3 is what runs.
    let id = exec(&client, "boxed", &["python3", "-c", "print(1)"], false).await;
    let st = wait_exit(&client, &id).await;
    assert_eq!(output(&client, &id).await, "1\n", "{st}");
    assert_eq!(st["exit_code"], 0);
    // Only the hidden directory has this one: the refusal names it and the fix.
    let e = refused(
        &client,
        "exec_command",
        json!({"workspace_id": "boxed", "command": ["codespace-hidden-tool"]}),
        "PROCESS_SPAWN_FAILED",
    )
    .await;
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("not found on PATH inside the sandbox"), "{message}");
    assert!(message.contains(&shims.display().to_string()), "{message}");
    assert!(message.contains("extra_read_roots"), "{message}");
    // A program missing everywhere names no hidden directory but this one.
    let e = refused(
        &client,
        "exec_command",
        json!({"workspace_id": "boxed", "command": ["codespace-no-such-program"]}),
        "PROCESS_SPAWN_FAILED",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("not found on PATH"), "{e}");
    // Shown as an extra read root, the same directory's program runs.
    let id = exec(&client, "shown", &["codespace-hidden-tool"], false).await;
    wait_exit(&client, &id).await;
    assert_eq!(output(&client, &id).await, "from-the-hidden-shim\n");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_script_whose_interpreter_is_hidden_says_so() {
    let mut env = Env::new();
    let root = env.workspace("boxed", json!({"profile": "workspace-write"}));
    let shims = hidden_bin(&env, &["python3"]);
    let interpreter = shims.join("python3");
    let script = root.join("tool");
    std::fs::write(&script, format!("#!{} -u\nprint(1)\n", interpreter.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let client = env.stdio().await;
    // The script is found (it is in the workspace); what the sandbox hides is its interpreter.
    let e = refused(
        &client,
        "exec_command",
        json!({"workspace_id": "boxed", "command": ["./tool"]}),
        "PROCESS_SPAWN_FAILED",
    )
    .await;
    let message = e["message"].as_str().unwrap();
    assert!(message.contains(&format!("its interpreter {}", interpreter.display())), "{message}");
    assert!(message.contains("extra_read_roots"), "{message}");
    assert!(!message.contains("not found on PATH"), "{message}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn registry_env_and_time_limits_apply_and_the_argument_is_clamped() {
    let mut env = Env::new();
    env.workspace(
        "w",
        json!({"profile": "workspace-write", "sandbox": "off", "timeout_secs": 1,
               "max_timeout_secs": 3,
               "env": {"GREETING": "hello there", "PATH": "/usr/bin:/bin"}}),
    );
    let client = env.stdio().await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
    let process = &info["execution"]["process"];
    assert_eq!(process["env_keys"], json!(["GREETING", "PATH"]), "{process}");
    assert_eq!(process["limits"]["timeout_secs"], 1, "{process}");
    assert_eq!(process["limits"]["max_timeout_secs"], 3, "{process}");
    assert!(!info.to_string().contains("hello there"), "values are never shown: {info}");

    let r = call(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["sh", "-c", "echo \"$GREETING|$PATH|$HOME\""]}),
    )
    .await
    .unwrap();
    assert_eq!(r["timeout_secs"], 1, "{r}");
    assert!(r.get("timeout_clamped").is_none(), "{r}");
    let id = r["process_id"].as_str().unwrap();
    wait_exit(&client, id).await;
    let out = output(&client, id).await;
    assert!(out.starts_with("hello there|/usr/bin:/bin|"), "{out}");

    // The workspace's default limit kills it, and both tools say so.
    let id = exec(&client, "w", &["sh", "-c", "echo started; sleep 30"], false).await;
    let st = wait_exit(&client, &id).await;
    assert_eq!(
        (st["termination"].clone(), st["timeout_secs"].clone()),
        (json!("timeout"), json!(1))
    );
    assert_timeout_once(&client, &id).await;

    // Asking for more than the ceiling gets the ceiling, and the result says so.
    let started = Instant::now();
    let r = call(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["sleep", "30"], "timeout_secs": 1000}),
    )
    .await
    .unwrap();
    assert_eq!((r["timeout_secs"].clone(), r["timeout_clamped"].clone()), (json!(3), json!(true)));
    let st = wait_exit(&client, r["process_id"].as_str().unwrap()).await;
    assert_eq!(
        (st["termination"].clone(), st["timeout_secs"].clone()),
        (json!("timeout"), json!(3))
    );
    assert!(started.elapsed() >= Duration::from_secs(3), "{:?}", started.elapsed());
    // Within the ceiling, the request is granted as asked.
    let r = call(
        &client,
        "exec_command",
        json!({"workspace_id": "w", "command": ["true"], "timeout_secs": 2}),
    )
    .await
    .unwrap();
    assert_eq!(r["timeout_secs"], 2, "{r}");
    wait_exit(&client, r["process_id"].as_str().unwrap()).await;
    client.cancel().await.unwrap();
}

/// At the end of a timed-out process's output, the first read says TIMEOUT; later ones say
/// eof.
async fn assert_timeout_once(client: &Client, id: &str) {
    let r = call(client, "read_process", json!({"process_id": id})).await.unwrap();
    assert_eq!(r["chunk"], "started\n", "{r}");
    let end = r["cursor"].clone();
    let e =
        refused(client, "read_process", json!({"process_id": id, "cursor": end}), "TIMEOUT").await;
    assert!(e["message"].as_str().unwrap().contains("time limit of 1 s"), "{e}");
    let r = call(client, "read_process", json!({"process_id": id, "cursor": end})).await.unwrap();
    assert_eq!(r["eof"], true, "{r}");
}

async fn timed(client: &Client, tool: &str, args: Value) -> (Value, Duration) {
    let started = Instant::now();
    let r = call(client, tool, args).await.unwrap();
    (r, started.elapsed())
}

#[tokio::test]
async fn wait_ms_returns_on_output_on_exit_and_when_the_wait_ends() {
    let mut env = Env::new();
    for id in ["a", "b"] {
        env.workspace(id, json!({"profile": "workspace-write", "sandbox": "off"}));
    }
    let client = env.stdio().await;
    // On output: the reply comes with the first line, long before the wait would end.
    let id = exec(&client, "a", &["sh", "-c", "sleep 0.5; echo hello; sleep 2"], false).await;
    let (r, took) =
        timed(&client, "read_process", json!({"process_id": id, "wait_ms": 20000})).await;
    assert_eq!(r["chunk"], "hello\n", "{r}");
    assert!(took >= Duration::from_millis(400) && took < Duration::from_secs(5), "{took:?}");
    // On exit: no more output, the end of the process ends the wait.
    let cursor = r["cursor"].clone();
    let (r, took) = timed(
        &client,
        "read_process",
        json!({"process_id": id, "cursor": cursor, "wait_ms": 20000}),
    )
    .await;
    assert_eq!((r["chunk"].clone(), r["eof"].clone()), (json!(""), json!(true)), "{r}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    let id = exec(&client, "a", &["sleep", "0.5"], false).await;
    let (st, took) =
        timed(&client, "process_status", json!({"process_id": id, "wait_ms": 20000})).await;
    assert_eq!(st["state"], "exited", "{st}");
    assert!(took < Duration::from_secs(5), "{took:?}");

    // When the wait ends: what there is (nothing), as after any read.
    let quiet = exec(&client, "a", &["sleep", "30"], false).await;
    let (r, took) =
        timed(&client, "read_process", json!({"process_id": quiet, "wait_ms": 300})).await;
    assert_eq!((r["chunk"].clone(), r["eof"].clone()), (json!(""), json!(false)), "{r}");
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(3), "{took:?}");
    let (st, took) =
        timed(&client, "process_status", json!({"process_id": quiet, "wait_ms": 300})).await;
    assert_eq!(st["state"], "running", "{st}");
    assert!(took >= Duration::from_millis(250), "{took:?}");

    // A waiting call blocks nobody: other calls on this process and another go on.
    let other = exec(&client, "b", &["sh", "-c", "echo other"], false).await;
    let waiting = timed(&client, "read_process", json!({"process_id": quiet, "wait_ms": 3000}));
    let meanwhile = async {
        // Sent after the wait, so answered once the server has taken it.
        call(&client, "workspace_info", json!({})).await.unwrap();
        let started = Instant::now();
        call(&client, "process_status", json!({"process_id": quiet})).await.unwrap();
        wait_exit(&client, &other).await;
        assert_eq!(output(&client, &other).await, "other\n");
        call(&client, "workspace_info", json!({"workspace_id": "a"})).await.unwrap();
        started.elapsed()
    };
    let ((r, waited), others) = tokio::join!(waiting, meanwhile);
    assert_eq!(r["chunk"], "", "{r}");
    assert!(waited >= Duration::from_millis(2500), "{waited:?}");
    assert!(others < Duration::from_millis(2000), "other calls waited: {others:?}");
    call(&client, "terminate_process", json!({"process_id": quiet})).await.unwrap();
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn workspace_info_shows_the_process_limits_and_serialization() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "workspace-write"}));
    env.workspace("ro", json!({}));
    let (client, _) = env
        .stdio_with(&[("CODESPACE_PROCESS_TIMEOUT_SECS", "45"), ("CODESPACE_MAX_PROCESSES", "3")])
        .await;
    let info = call(&client, "workspace_info", json!({"workspace_id": "w"})).await.unwrap();
    let execution = &info["execution"];
    let process = &execution["process"];
    assert_eq!(process["available"], true);
    let caps = &process["capabilities"];
    assert_eq!(caps["wait"], true, "{caps}");
    assert_eq!(caps["tty"]["initial_rows"], 24, "{caps}");
    assert_eq!(caps["lifetime"]["client_disconnect"], "keep_running", "{caps}");
    let limits = &process["limits"];
    for (key, value) in [
        ("timeout_secs", json!(45)),
        ("max_timeout_secs", json!(45)),
        ("kill_grace_ms", json!(2000)),
        ("max_live_processes", json!(3)),
        ("output_ring_bytes", json!(262_144)),
        ("output_retained_bytes", json!(64 * 1024 * 1024)),
        ("read_max_bytes", json!(262_144)),
        ("wait_max_ms", json!(55_000)),
        ("max_pids", json!(1024)),
    ] {
        assert_eq!(limits[key], value, "{key}: {limits}");
    }
    assert_eq!(process["env_keys"], json!([]));
    let ser = &execution["serialization"];
    assert_eq!(ser["conflict_error"], "WORKSPACE_BUSY", "{ser}");
    assert_eq!(ser["queue_full_error"], "RESOURCE_QUEUE_FULL", "{ser}");
    assert_eq!(ser["request_conflict"], "wait-fifo", "{ser}");
    assert_eq!(ser["max_waiters_per_resource"], 64, "{ser}");
    assert_eq!(ser["live_process_holds_mutation_lease"], true, "{ser}");
    // A read-only workspace runs no command: no capabilities, the limits still shown.
    let ro = call(&client, "workspace_info", json!({"workspace_id": "ro"})).await.unwrap();
    let process = &ro["execution"]["process"];
    assert!(process.get("capabilities").is_none(), "{process}");
    assert_eq!(process["limits"]["timeout_secs"], 45, "{process}");
    client.cancel().await.unwrap();
}
