//! Peer benchmark: CodeSpace beside four peer MCP servers in one run, all through the official
//! Python MCP SDK client (`peers.py`): cli-mcp-server and mcp-shell-server (PyPI), the
//! reference filesystem and everything servers (npm), installed pinned by `scripts/bench`
//! into `target/bench-tools`. Rows: `tools/list` size (whole, and what a client puts in a
//! model's context) against the filesystem server, its SDK round trip against the best peer,
//! and `true` to a known exit, `python3 -c 'print(1)'` with its output and `seq 1 200000`
//! drained whole against the fastest command peer, with the calls each took.
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

use std::path::PathBuf;
use std::process::Command;

use common::{missing, row, verdict};
use serde_json::{Value, json};

const COMMAND_ROWS: [(&str, &str); 3] = [
    ("true", "`true` to a known exit"),
    ("python3 -c 'print(1)'", "`python3 -c 'print(1)'` with its output"),
    ("seq 1 200000 drained whole", "`seq 1 200000` drained whole"),
];
const COMMAND_PEERS: [&str; 2] = ["cli-mcp-server", "mcp-shell-server"];
const LIST_PEERS: [&str; 4] =
    ["cli-mcp-server", "mcp-shell-server", "server-filesystem", "server-everything"];

fn kb(bytes: &Value) -> String {
    format!("{:.1} KB", bytes.as_f64().unwrap_or(0.0) / 1000.0)
}

fn list_rows(servers: &Value, why_missing: &Value) {
    let ours = &servers["codespace"]["list"];
    let fs = &servers["server-filesystem"]["list"];
    let no_fs = || format!("server-filesystem {}", why_missing["server-filesystem"]);
    for (key, label, cap) in [
        ("bytes", "`tools/list` size", 40_000.0),
        ("context_bytes", "`tools/list` names, descriptions and input schemas", 16_000.0),
    ] {
        let ours_n = ours[key].as_f64().unwrap();
        let (floor, ratio) = match fs[key].as_f64() {
            Some(f) => {
                (format!("server-filesystem {}", kb(&fs[key])), format!("{:.2}x", ours_n / f))
            }
            None => (no_fs(), String::new()),
        };
        let target = verdict(&format!("<= {} KB", cap / 1000.0), ours_n <= cap);
        let tools = ours["tools"].as_u64().unwrap_or(0);
        row(label, &format!("{} ({tools} tools)", kb(&ours[key])), &floor, &ratio, &target);
    }
    let best = LIST_PEERS
        .iter()
        .filter_map(|p| Some((*p, servers[*p]["list_ms"].as_f64()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let ours_ms = servers["codespace"]["list_ms"].as_f64().unwrap();
    let label = "`tools/list` SDK round trip";
    match best {
        Some((peer, ms)) => row(
            label,
            &format!("{ours_ms:.2} ms"),
            &format!("best peer {peer} {ms:.2} ms"),
            &format!("{:.2}x", ours_ms / ms),
            &verdict("<= 1.5x", ours_ms <= 1.5 * ms),
        ),
        None => missing(label, &format!("no peer ran: {why_missing}")),
    }
}

fn command_rows(servers: &Value, why_missing: &Value) {
    let ours = &servers["codespace"];
    for (key, label) in COMMAND_ROWS {
        let fastest = COMMAND_PEERS
            .iter()
            .filter_map(|p| Some((*p, servers[*p][key]["ms"].as_f64()?)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some(ms) = ours[key]["ms"].as_f64() else {
            missing(label, &format!("CodeSpace: {}", ours[key]["error"]));
            continue;
        };
        let calls = ours[key]["calls"].as_u64().unwrap_or(0);
        let plural = if calls == 1 { "" } else { "s" };
        let ours_text = format!("{calls} call{plural}, {ms:.2} ms");
        let Some((peer, peer_ms)) = fastest else {
            let why: Vec<String> = COMMAND_PEERS
                .iter()
                .map(|p| {
                    let e = &servers[*p][key]["error"];
                    format!("{p}: {}", if e.is_null() { &why_missing[*p] } else { e })
                })
                .collect();
            row(label, &ours_text, &format!("missing: {}", why.join("; ")), "", "");
            continue;
        };
        let refused: Vec<String> = COMMAND_PEERS
            .iter()
            .filter(|p| !servers[**p][key]["error"].is_null())
            .map(|p| format!("{p} refused: {}", servers[*p][key]["error"]))
            .collect();
        let peer_text = match refused.is_empty() {
            true => format!("fastest peer {peer} 1 call, {peer_ms:.2} ms"),
            false => {
                format!("fastest peer {peer} 1 call, {peer_ms:.2} ms ({})", refused.join("; "))
            }
        };
        // A drained output is judged by time alone; a quick command also by its one call.
        let target = match key {
            "seq 1 200000 drained whole" => verdict("<= 1x", ms <= peer_ms),
            _ => verdict("1 call, <= 1x", calls == 1 && ms <= peer_ms),
        };
        row(label, &ours_text, &peer_text, &format!("{:.2}x", ms / peer_ms), &target);
    }
}

fn main() {
    let labels = ["`tools/list` size", "`tools/list` SDK round trip"]
        .into_iter()
        .chain(COMMAND_ROWS.iter().map(|(_, l)| *l));
    let Some(python) = common::python() else {
        for label in labels {
            missing(label, "no Python with the `mcp` package (set CODESPACE_PYTHON)");
        }
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let config = tmp.path().join("reg.json");
    let registry = json!({"workspaces": {"w": {"root": ws.display().to_string(),
        "profile": "workspace-write", "sandbox": "off"}}});
    std::fs::write(&config, registry.to_string()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/peers.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(common::binary())
        .arg(&config)
        .arg(&ws)
        .arg(common::bench_tools())
        .current_dir(&ws)
        .env("XDG_STATE_HOME", tmp.path().join("state"))
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("no output");
        for label in labels {
            missing(label, &format!("peers.py failed: {last}"));
        }
        return;
    }
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    println!("{}", serde_json::to_string_pretty(&figures).unwrap());
    let (servers, why_missing) = (&figures["servers"], &figures["missing"]);
    if servers["codespace"].is_null() {
        for label in labels {
            missing(label, &format!("CodeSpace did not run: {}", why_missing["codespace"]));
        }
        return;
    }
    list_rows(servers, why_missing);
    command_rows(servers, why_missing);
}
