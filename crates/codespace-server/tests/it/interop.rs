//! Interoperability: the official Python MCP SDK over stdio and HTTP, and the official MCP
//! conformance suite's server scenarios over HTTP. Both tools are installed by
//! `scripts/test`; when they are missing these tests fail with the command that installs
//! them (they never pass by skipping).

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::support::{Env, bin, codespace_vars};

fn tool(var: &str, relative: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(var) {
        return PathBuf::from(p);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative);
    assert!(
        p.exists(),
        "{var} is not set and {} does not exist: run `scripts/test` (it installs the tool) or set {var}",
        p.display()
    );
    p
}

fn python_env() -> Env {
    let mut env = Env::new();
    let root = env.workspace("py", json!({}));
    std::fs::write(root.join("hello.txt"), "hello from python\n").unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/deep.txt"), "deep\n").unwrap();
    env
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/python_client.py")
}

#[test]
fn python_sdk_over_stdio_and_http() {
    let python = tool("CODESPACE_PYTHON", "target/test-tools/venv/bin/python");
    let env = python_env();
    let mut python_stdio = Command::new(&python);
    for name in codespace_vars() {
        python_stdio.env_remove(name);
    }
    let out = python_stdio
        .arg(script())
        .args(["stdio", bin()])
        .arg(env.config())
        .env("XDG_STATE_HOME", env.state())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python stdio: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: legacy"));

    let server = env.http(&["--no-auth"]);
    let out = Command::new(&python).arg(script()).args(["http", &server.url()]).output().unwrap();
    assert!(
        out.status.success(),
        "python http: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: auto"));
}

#[test]
fn official_conformance_scenarios_over_http() {
    let suite =
        tool("CODESPACE_CONFORMANCE", "target/test-tools/node/node_modules/.bin/conformance");
    let env = python_env();
    let server = env.http(&["--no-auth"]);
    // The suite needs Node 22, which the `node` npm package puts beside it.
    let bin_dir = suite.parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        let out = Command::new(&suite)
            .args(["server", "--url", &server.url(), "--scenario", scenario])
            .env("PATH", &path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{scenario}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(" 0 failed"), "{scenario}: {stdout}");
    }
}
