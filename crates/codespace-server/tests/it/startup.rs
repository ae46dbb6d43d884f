//! Starting the server as a person or a desktop client would: a terminal on stdin, the
//! zero-config start from a home directory or `/`, and `doctor --config` making the same
//! checks as `serve`.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::support::{Env, bin, codespace_vars};

const WAITING: &str = "waiting for a client";

#[test]
fn a_terminal_on_stdin_gets_one_line_saying_what_serve_waits_for() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    // `script` gives the server a terminal on stdin; its own stdin at end of file ends it.
    let line = format!("{} serve --config {}", bin(), env.config().display());
    let mut script = Command::new("script");
    for name in codespace_vars() {
        script.env_remove(name);
    }
    let out = script
        .args(["-qec", &line, "/dev/null"])
        .env("XDG_STATE_HOME", env.state())
        .stdin(Stdio::null())
        .output()
        .expect("`script` (util-linux) runs the server on a terminal");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains(WAITING), "on a terminal: {shown}");
    assert!(shown.contains("--http"), "it says how to connect: {shown}");
    assert!(shown.contains("MCP server for AI agents"), "stdin ended, no client: {shown}");

    // A client's pipe gets nothing of the kind: stdout stays quiet.
    let out = env
        .command()
        .args(["serve", "--config"])
        .arg(env.config())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(WAITING));
    assert!(out.stdout.is_empty());
    // Its stdin ended before any client said `initialize`: one line says what the command
    // is for, on stderr only.
    assert!(stderr.contains("stdin closed before an MCP client sent `initialize`"), "{stderr}");
    assert!(stderr.contains("MCP server for AI agents"), "{stderr}");
    assert!(!stderr.contains("stdio initialize failed"), "{stderr}");
}

#[test]
fn zero_config_from_a_home_directory_names_the_fix_and_creates_nothing() {
    let env = Env::new();
    let home = env.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let out = env
        .command()
        .env_remove("XDG_STATE_HOME")
        .env("HOME", &home)
        .current_dir(&home)
        .arg("serve")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--config") && err.contains("--operations-db"), "{err}");
    assert!(!home.join(".local").exists(), "the refused start created the state directory");

    // With the ledger elsewhere, the same start works.
    let out = env
        .command()
        .env_remove("XDG_STATE_HOME")
        .env("HOME", &home)
        .current_dir(&home)
        .args(["serve", "--operations-db", ":memory:"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("--operations-db"), "an explicit :memory: ledger is accepted: {err}");
}

#[test]
fn zero_config_from_the_filesystem_root_names_the_fix() {
    let env = Env::new();
    let out = env.command().current_dir("/").arg("serve").stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--config"), "{err}");
}

#[test]
fn doctor_config_makes_the_checks_serve_makes() {
    let mut env = Env::new();
    let gone = env.workspace("gone", json!({}));
    let config = env.config();
    std::fs::remove_dir(&gone).unwrap();
    let doctor = env.command().args(["doctor", "--config"]).arg(&config).output().unwrap();
    let serve = env
        .command()
        .args(["serve", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(doctor.status.code(), Some(2));
    assert_eq!(serve.status.code(), Some(2));
    let doctor_err = String::from_utf8_lossy(&doctor.stderr);
    assert!(doctor_err.contains("workspaces.gone.root"), "{doctor_err}");
    assert_eq!(doctor_err, String::from_utf8_lossy(&serve.stderr), "the same message");
    // The report itself is still printed.
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("registry"));
}
