//! The command line: version, help, usage errors naming the flag or key (exit 2), doctor.

use serde_json::{Value, json};

use crate::support::{Env, RawStdio};

#[test]
fn version_and_help() {
    let env = Env::new();
    let v = env.command().arg("--version").output().unwrap();
    assert!(v.status.success());
    assert_eq!(
        String::from_utf8_lossy(&v.stdout).trim(),
        format!("codespace {}", env!("CARGO_PKG_VERSION"))
    );
    let h = env.command().arg("help").output().unwrap();
    assert!(h.status.success());
    let text = String::from_utf8_lossy(&h.stdout);
    assert!(text.contains("serve") && text.contains("doctor"), "{text}");
    let sh = env.command().args(["help", "serve"]).output().unwrap();
    let text = String::from_utf8_lossy(&sh.stdout);
    for flag in [
        "--config",
        "--write",
        "--http",
        "--host",
        "--port",
        "--token",
        "--token-file",
        "--no-auth",
        "--allowed-host",
        "--allowed-origin",
        "--operations-db",
    ] {
        assert!(text.contains(flag), "help serve lacks {flag}");
    }
}

#[test]
fn usage_errors_name_the_flag_or_key_and_exit_2() {
    let mut env = Env::new();
    env.workspace("ok", json!({}));
    let good = env.config();
    let bad_cfg = env.path().join("bad.json");
    let inside_db = env.path().join("ws/ok/ledger.db");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["serve".into(), "--bogus".into()], "--bogus"),
        (vec!["serve".into(), "--port".into(), "99999".into()], "--port"),
        (vec!["serve".into(), "--config".into(), "/nonexistent/reg.json".into()], "--config"),
        (
            vec!["serve".into(), "--config".into(), good.display().to_string(), "--write".into()],
            "--write",
        ),
        (
            vec!["serve".into(), "--config".into(), bad_cfg.display().to_string()],
            "workspaces.w.profile",
        ),
        (
            vec![
                "serve".into(),
                "--config".into(),
                good.display().to_string(),
                "--operations-db".into(),
                inside_db.display().to_string(),
            ],
            "--operations-db",
        ),
        (vec!["frobnicate".into()], "frobnicate"),
    ];
    std::fs::write(&bad_cfg, r#"{"workspaces": {"w": {"root": "/tmp", "profile": "host-admin"}}}"#)
        .unwrap();
    for (args, needle) in cases {
        let out = env.command().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: stderr should name {needle}: {err}");
    }
    // The file name is named with the key.
    let out =
        env.command().args(["serve", "--config", bad_cfg.to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.json"));
    // A root that does not exist fails the start with its key.
    let missing = env.path().join("missing.json");
    std::fs::write(
        &missing,
        r#"{"workspaces": {"gone": {"root": "/nonexistent/codespace/root"}}}"#,
    )
    .unwrap();
    let out =
        env.command().args(["serve", "--config", missing.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("workspaces.gone.root"));
    // So does an extra read root that is not a directory.
    let extra = env.path().join("extra.json");
    let ws = env.path().join("extra-ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        &extra,
        json!({"workspaces": {"x": {"root": ws, "extra_read_roots": ["/nonexistent/toolchain"]}}})
            .to_string(),
    )
    .unwrap();
    let out = env.command().args(["serve", "--config", extra.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("workspaces.x.extra_read_roots[0]") && err.contains("/nonexistent/toolchain"),
        "{err}"
    );
    // A process setting out of range names the variable (the kernel's pid_max floor is 301).
    for bad in ["300", "4194305", "many"] {
        let out = env
            .command()
            .env("CODESPACE_PROCESS_MAX_PIDS", bad)
            .args(["serve", "--config"])
            .arg(env.config())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("CODESPACE_PROCESS_MAX_PIDS") && err.contains("301"), "{bad}: {err}");
    }
    // CODESPACE_CONFIG is the same as --config.
    let out = env.command().env("CODESPACE_CONFIG", &bad_cfg).args(["serve"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn doctor_reports_host_and_registry() {
    let mut env = Env::new();
    env.workspace("demo", json!({"profile": "workspace-write"}));
    let out =
        env.command().args(["doctor", "--json", "--config"]).arg(env.config()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["server"], "codespace");
    for key in [
        "landlock_abi",
        "seccomp_filter",
        "user_and_network_namespaces",
        "mount_and_pid_namespaces",
        "openat2",
    ] {
        assert!(doc["host"].get(key).is_some(), "doctor lacks {key}");
    }
    assert_eq!(doc["host"]["openat2"], true);
    assert_eq!(doc["watching"]["inotify_instances_used"], 1);
    assert!(doc["watching"]["limits"]["max_user_watches"].as_u64().is_some_and(|n| n > 0));
    assert_eq!(doc["registry"]["workspaces"][0]["id"], "demo");
    assert_eq!(doc["registry"]["workspaces"][0]["profile"], "workspace-write");
    let text = env.command().args(["doctor", "--config"]).arg(env.config()).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("landlock ABI")
            && text.contains("demo:")
            && text.contains("command sandbox: linux-sandbox")
            && text.contains("max_user_watches: "),
        "{text}"
    );
    // Zero-config doctor shows the default workspace.
    let zero = env.command().current_dir(env.path()).args(["doctor", "--json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&zero.stdout).unwrap();
    assert_eq!(doc["registry"]["workspaces"][0]["id"], "default");
    assert_eq!(doc["registry"]["workspaces"][0]["profile"], "read-only");
}

#[test]
fn stdio_survives_malformed_frames() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::write(root.join("a.txt"), "ok").unwrap();
    let mut raw = RawStdio::start(&env, &[]);
    raw.send_line("{this is not json");
    raw.send(&json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"workspace_id":"ro","path":"a.txt"}}}));
    // Whatever the server says about the bad line, the next request is answered in sync.
    let mut answered = false;
    for _ in 0..4 {
        let Some(v) = raw.recv() else { break };
        if v["id"] == 7 {
            assert_eq!(v["result"]["structuredContent"]["content"], "ok");
            answered = true;
            break;
        }
    }
    assert!(answered, "the call after a malformed frame must be answered");
    assert!(raw.finish().success(), "stdin EOF ends the server cleanly");
}

#[test]
fn refused_flags_leave_nothing_on_disk() {
    let mut env = Env::new();
    env.workspace("ok", json!({}));
    let config = env.config();
    let cases: [(&[&str], &str); 4] = [
        (&["--http", "--no-auth", "--host", "0.0.0.0"], "--no-auth"),
        (&["--http", "--allowed-origin", "*"], "--allowed-origin"),
        (&["--http", "--token", " "], "--token"),
        (&["--http", "--token-file", "/nonexistent/codespace/token"], "--token-file"),
    ];
    for (i, (flags, needle)) in cases.into_iter().enumerate() {
        // A state directory that does not exist yet: a refused start must not create it.
        let fresh = env.path().join(format!("fresh-state-{i}"));
        let out = env
            .command()
            .env("XDG_STATE_HOME", &fresh)
            .args(["serve", "--config"])
            .arg(&config)
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{flags:?}: stderr should name {needle}: {err}");
        assert!(!fresh.exists(), "{flags:?}: the refused start created {}", fresh.display());
    }
    // So does an out-of-range process setting, with the ledger given explicitly.
    let ledger = env.path().join("ledger.sqlite3");
    let out = env
        .command()
        .env("CODESPACE_MAX_PROCESSES", "0")
        .args(["serve", "--operations-db"])
        .arg(&ledger)
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CODESPACE_MAX_PROCESSES"));
    assert!(!ledger.exists(), "the refused start created the ledger");

    // So does a registry whose root cannot be opened: roots are checked before the ledger.
    let mut missing = Env::new();
    let gone = missing.workspace("gone", json!({}));
    let config = missing.config();
    std::fs::remove_dir(&gone).unwrap();
    let fresh = missing.path().join("fresh-state");
    let out = missing
        .command()
        .env("XDG_STATE_HOME", &fresh)
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("workspaces.gone.root"), "stderr should name the key: {err}");
    assert!(!fresh.exists(), "the refused start created {}", fresh.display());
}
