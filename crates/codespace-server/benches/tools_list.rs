//! `tools/list` benchmark: the answer's size (whole, what a client puts in its model's context,
//! output schemas) and its round trip through the official Python MCP SDK client
//! (`CODESPACE_PYTHON`, default `target/test-tools/venv/bin/python`; reported as missing
//! without it), against the reference filesystem server (pinned; installed with `npm` into
//! `target/bench-tools` as the patch bench does) measured in the same run (target: at most
//! 1.5x its round trip).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark panics on a setup failure and prints its figures to stdout"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their files on the host filesystem and start the server binary"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// The pinned peer, as the patch bench pins it.
const FILESYSTEM_PEER: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";

const ROUNDS: usize = 200;

fn python() -> Option<PathBuf> {
    let path = std::env::var_os("CODESPACE_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-tools/venv/bin/python")
    });
    let ok = Command::new(&path).args(["-c", "import mcp"]).output();
    ok.is_ok_and(|o| o.status.success()).then_some(path)
}

/// The peer's entry point, installed into `target/bench-tools` on first use.
fn filesystem_peer() -> Result<PathBuf, String> {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-tools/filesystem");
    let entry = tools.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !entry.exists() {
        std::fs::create_dir_all(&tools).map_err(|e| e.to_string())?;
        let st = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(&tools)
            .arg(FILESYSTEM_PEER)
            .status()
            .map_err(|e| format!("npm: {e}"))?;
        if !st.success() || !entry.exists() {
            return Err(format!("npm install {FILESYSTEM_PEER} failed"));
        }
    }
    Ok(entry)
}

fn row(name: &str, r: &Value) -> String {
    format!(
        "{name}: {} tools, {} B (descriptions and input schemas {} B, output schemas {} B); SDK tools/list {:.3} ms, ping {:.3} ms",
        r["tools"],
        r["bytes"],
        r["context_bytes"],
        r["output_bytes"],
        r["list_ms"].as_f64().unwrap(),
        r["ping_ms"].as_f64().unwrap()
    )
}

fn main() {
    let Some(python) = python() else {
        println!(
            "tools/list, Python SDK: missing (no Python with the `mcp` package; set CODESPACE_PYTHON)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    let config = tmp.path().join("reg.json");
    let registry = json!({"workspaces": {"w": {"root": root.display().to_string()}}});
    std::fs::write(&config, registry.to_string()).unwrap();
    let ours = json!([common::binary(), "serve", "--config", config]);
    let mut servers = vec![format!("codespace={ours}")];
    let peer = filesystem_peer();
    if let Ok(entry) = &peer {
        servers.push(format!("server-filesystem={}", json!(["node", entry, root])));
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/tools_list.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(ROUNDS.to_string())
        .args(&servers)
        .env("XDG_STATE_HOME", tmp.path().join("state"))
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours = &figures["codespace"];
    println!("{}", row("tools/list codespace", ours));
    match peer {
        Ok(_) => {
            let theirs = &figures["server-filesystem"];
            println!("{}", row("tools/list server-filesystem", theirs));
            let ratio = ours["list_ms"].as_f64().unwrap() / theirs["list_ms"].as_f64().unwrap();
            println!(
                "tools/list SDK round trip vs server-filesystem: {ratio:.2}x (target <= 1.5x)"
            );
        }
        Err(why) => println!("tools/list server-filesystem: missing ({why})"),
    }
}
