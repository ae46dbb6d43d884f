//! Interoperability: the official Python MCP SDK over stdio and HTTP; the official MCP
//! conformance suite over HTTP, its fixture-free scenarios against the real binary on both
//! wires and a revision's whole requirement set against the build with the
//! `conformance-fixtures` feature; and MCP
//! Inspector's strict schema lint. The tools are installed by `scripts/test`; when they are
//! missing these tests fail with the command that installs them (they never pass by
//! skipping).

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::support::{Env, HttpServer, bin, codespace_vars};

pub(crate) fn tool(var: &str, relative: &str) -> PathBuf {
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
    std::fs::write(root.join("nul.bin"), [0u8; 5]).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/deep.txt"), "deep\n").unwrap();
    // Where the client's sweep calls every tool (unconfined: the sweep checks answers, not
    // the sandbox).
    env.workspace("pw", json!({"profile": "workspace-write", "sandbox": "off"}));
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
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: structured-only"));

    let server = env.http(&["--no-auth"]);
    let out = Command::new(&python).arg(script()).args(["http", &server.url()]).output().unwrap();
    assert!(
        out.status.success(),
        "python http: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: auto"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: structured-only"));
}

/// PATH with the directory of an npm-installed tool first: the suite and the Inspector need
/// Node 22, which the `node` npm package puts beside them.
fn node_path(tool: &std::path::Path) -> String {
    let bin_dir = tool.parent().unwrap().to_path_buf();
    format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default())
}

/// Runs the suite against `url` with `args` (one scenario) and requires that it ran and
/// nothing failed; returns its report.
fn conformance(suite: &std::path::Path, url: &str, args: &[&str]) -> String {
    let out = Command::new(suite)
        .args(["server", "--url", url])
        .args(args)
        .env("PATH", node_path(suite))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // A scenario the suite finds inapplicable at the wire asked for exits 0 as SKIPPED.
    assert!(stdout.contains("Passed: ") && stdout.contains(" 0 failed"), "{args:?}: {stdout}");
    assert!(!stdout.contains("FAILURE"), "{args:?}: {stdout}");
    stdout
}

/// Runs a revision's frozen requirement set (`--requirements`), at that revision's wire,
/// and requires that every scenario it scores passes (the suite's exit status says so);
/// returns how many scenarios it scored.
fn requirements(suite: &std::path::Path, url: &str, revision: &str) -> usize {
    let listed = Command::new(suite)
        .args(["list", "--server", "--requirements", revision])
        .env("PATH", node_path(suite))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    // The scored server scenarios: the list's first section, up to the client scenarios.
    let scored: Vec<&str> = listed
        .split("Client scenarios")
        .next()
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .collect();
    assert!(!scored.is_empty(), "{revision}: no scored scenario listed: {listed}");
    let out = Command::new(suite)
        .args(["server", "--url", url, "--requirements", revision])
        .env("PATH", node_path(suite))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary = stdout.split("=== SUMMARY ===").nth(1).unwrap_or_default();
    let failing: Vec<&str> = scored
        .iter()
        .copied()
        .filter(|s| !summary.lines().any(|l| l.starts_with(&format!("\u{2713} {s}: "))))
        .collect();
    assert!(
        failing.is_empty() && out.status.success(),
        "{revision}: {} of {} scored scenarios fail: {failing:?}\n{stdout}\n{}",
        failing.len(),
        scored.len(),
        String::from_utf8_lossy(&out.stderr)
    );
    scored.len()
}

/// The scenarios that need no fixture, on each wire the suite speaks: the real binary
/// passes every one.
#[test]
fn official_conformance_scenarios_over_http() {
    let suite =
        tool("CODESPACE_CONFORMANCE", "target/test-tools/node/node_modules/.bin/conformance");
    let env = python_env();
    let server = env.http(&["--no-auth"]);
    for scenario in [
        "server-initialize",
        "logging-set-level",
        "ping",
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "server-session-lifecycle",
    ] {
        conformance(
            &suite,
            &server.url(),
            &["--scenario", scenario, "--spec-version", "2025-11-25"],
        );
    }
    for scenario in [
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "http-header-validation",
        // Still pending upstream: it needs a tool with an `x-mcp-header` field (workspace_id).
        "http-custom-header-server-validation",
    ] {
        conformance(
            &suite,
            &server.url(),
            &["--scenario", scenario, "--spec-version", "2026-07-28"],
        );
    }
}

/// Builds the binary with the conformance fixtures into its own target directory, so the
/// binary every other test runs is never the fixture build.
fn fixture_build() -> std::path::PathBuf {
    let target =
        std::path::Path::new(bin()).parent().unwrap().parent().unwrap().join("conformance");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "-p", "codespace-server", "--features", "conformance-fixtures"])
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "building the conformance-fixtures variant failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug/codespace")
}

/// Every scenario each revision requires (its frozen requirement set), the fixture ones
/// included, against the fixture build at that revision's wire: every one passes. The
/// 2026-07-28 set has the input-required (MRTR) scenarios and the stateless lifecycle; the
/// suite runs its extension scenarios (tasks) and those still pending upstream beside them
/// without scoring them.
#[test]
fn official_conformance_requirements_against_the_fixture_build() {
    let suite =
        tool("CODESPACE_CONFORMANCE", "target/test-tools/node/node_modules/.bin/conformance");
    let fixture_bin = fixture_build();
    let env = python_env();
    let server = HttpServer::start(env.http_command_of(&fixture_bin, &["--no-auth"]));
    assert_eq!(requirements(&suite, &server.url(), "2025-11-25"), 30);
    assert_eq!(requirements(&suite, &server.url(), "2026-07-28"), 37);
}

/// The Tasks extension's scenarios against the fixture build (`greet`, `slow_compute`,
/// `failing_job`, `protocol_error_job`, `confirm_delete`, `multi_input`,
/// `test_tool_with_task`): the suite lists 10, and every check of each passes (the
/// input-required ones drive tasks that wait in `input_required` through `tasks/update`, and
/// an MRTR round that escalates to a task).
#[test]
fn official_conformance_tasks_scenarios_against_the_fixture_build() {
    let suite =
        tool("CODESPACE_CONFORMANCE", "target/test-tools/node/node_modules/.bin/conformance");
    let listed = Command::new(&suite)
        .args(["list", "--server"])
        .env("PATH", node_path(&suite))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let scenarios: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| name.starts_with("tasks-"))
        .collect();
    assert_eq!(scenarios.len(), 10, "the suite's tasks scenarios: {listed}");
    let fixture_bin = fixture_build();
    let env = python_env();
    let server = HttpServer::start(env.http_command_of(&fixture_bin, &["--no-auth"]));
    for scenario in scenarios {
        conformance(&suite, &server.url(), &["--scenario", scenario]);
    }
}

/// MCP Inspector's strict lint finds nothing to warn about in any tool's schemas.
#[test]
fn inspector_strict_lint_reports_no_warning() {
    let inspector =
        tool("CODESPACE_INSPECTOR", "target/test-tools/node/node_modules/.bin/mcp-inspector");
    let env = python_env();
    let server = env.http(&["--no-auth"]);
    let out = Command::new(&inspector)
        .args(["--cli", "--strict", "--method", "tools/list", &server.url()])
        .env("PATH", node_path(&inspector))
        .env("MCP_CATALOG_PATH", env.path().join("inspector-catalog.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "inspector: {stdout}\n{stderr}");
    let list: serde_json::Value = serde_json::from_str(&stdout).expect("tools/list JSON");
    assert_eq!(list["tools"].as_array().map(Vec::len), Some(23), "{stdout}");
    assert!(!stderr.contains("Warning") && !stderr.contains("Error"), "strict lint: {stderr}");
}
