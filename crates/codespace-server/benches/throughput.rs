//! Throughput benchmark by a standard HTTP load generator (`oha`, installed pinned by
//! `scripts/bench` into `target/bench-tools/bin`): `read` of a 4 KiB file as self-contained
//! POSTs on the 2026-07-28 stateless wire (no session: version, capabilities and client in
//! `_meta`) at 50 connections for a few seconds, giving calls per second, p99 latency, the
//! server's resident memory (now and peak) and its CPU time per call; then the same tool
//! against the reference everything server's `echo` of a 4 KiB message over its Streamable
//! HTTP (a session opened first), in the same run; and the floor: a bare axum server on the
//! same runtime answering the same bytes for each POST after parsing its body (`floor`), the
//! most these two cores give any JSON-RPC server over HTTP beside the load tool. Target: at
//! least 5,000 calls/s on two cores, p99 under 20 ms, RSS under 64 MiB.
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
mod floor;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{missing, row, rss_and_peak_kib, verdict};
use serde_json::{Value, json};

const CONNECTIONS: &str = "50";
const DURATION: &str = "5s";
const ROW: &str = "HTTP, 50 connections, `read` 4 KiB (oha)";

/// One load run's figures.
struct Load {
    per_sec: f64,
    p99_ms: f64,
    ok: u64,
    total: u64,
    rss_kib: u64,
    peak_kib: u64,
    cpu_us_per_call: f64,
}

/// One POST on its own connection: the whole response (head and body) as text.
fn post(addr: &str, headers: &[String], body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    let standard =
        ["Content-Type: application/json", "Accept: application/json, text/event-stream"];
    let name = |h: &str| h.split(':').next().unwrap_or_default().to_ascii_lowercase();
    for h in standard.iter().filter(|s| !headers.iter().any(|h| name(h) == name(s))) {
        req.push_str(&format!("{h}\r\n"));
    }
    for h in headers {
        req.push_str(&format!("{h}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    // The stream may stay open after the answer (SSE): what came in time is enough.
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// CPU time (user + system) of `pid` so far, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis, from field 3 (the state): utime and
    // stime (fields 14 and 15) are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

/// `oha` against `url` with `headers` and `body`, 50 connections for a few seconds.
fn oha(oha: &Path, url: &str, headers: &[String], body: &str, pid: u32) -> Load {
    let mut cmd = Command::new(oha);
    cmd.args(["--no-tui", "--output-format", "json", "-c", CONNECTIONS, "-z", DURATION]);
    cmd.args(["-m", "POST", "-d", body]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    cmd.arg(url);
    let ticks = cpu_ticks(pid);
    let out = cmd.output().unwrap();
    let spent = cpu_ticks(pid) - ticks;
    assert!(out.status.success(), "oha: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes = v["statusCodeDistribution"].as_object().cloned().unwrap_or_default();
    let ok = codes.get("200").and_then(Value::as_u64).unwrap_or(0);
    let total: u64 = codes.values().filter_map(Value::as_u64).sum();
    let (rss_kib, peak_kib) = rss_and_peak_kib(pid);
    let hz = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse::<f64>().ok())
        .unwrap_or(100.0);
    Load {
        per_sec: ok as f64 / v["summary"]["total"].as_f64().unwrap_or(f64::NAN),
        p99_ms: v["latencyPercentiles"]["p99"].as_f64().unwrap_or(f64::NAN) * 1e3,
        ok,
        total,
        rss_kib,
        peak_kib,
        cpu_us_per_call: spent as f64 / hz * 1e6 / ok.max(1) as f64,
    }
}

fn describe(l: &Load) -> String {
    format!(
        "{:.0} calls/s, p99 {:.1} ms, RSS {:.1} MiB (peak {:.1}), CPU {:.0} µs per call; {} of {} answered 200",
        l.per_sec,
        l.p99_ms,
        l.rss_kib as f64 / 1024.0,
        l.peak_kib as f64 / 1024.0,
        l.cpu_us_per_call,
        l.ok,
        l.total
    )
}

/// The stateless `read` of 4 KiB, as a body and its headers.
fn stateless_read() -> (String, Vec<String>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "read", "arguments": {"workspace_id": "w", "path": "4k.txt"},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "oha", "version": "1"},
    }}});
    let headers = [
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: read",
        "Mcp-Param-Workspace-Id: w",
    ];
    (body.to_string(), headers.iter().map(|h| (*h).to_owned()).collect())
}

/// The body of a whole response `post` returned.
fn body_of(answer: &str) -> &str {
    answer.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}

/// This server's figures, and the bytes it answered the call with.
fn codespace(oha_bin: &Path, dir: &Path) -> (Load, Vec<u8>) {
    let ws = dir.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("4k.txt"), "x".repeat(4095) + "\n").unwrap();
    let config = dir.join("reg.json");
    let registry = json!({"workspaces": {"w": {"root": ws.display().to_string()}}});
    std::fs::write(&config, registry.to_string()).unwrap();
    let mut server = Command::new(common::binary())
        .args(["serve", "--http", "--port", "0", "--no-auth", "--config"])
        .arg(&config)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the server says where it listens").unwrap();
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().trim_end_matches("/mcp").to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let (body, headers) = stateless_read();
    let answer = post(&addr, &headers, &body);
    assert!(answer.contains("\"byte_count\":4096"), "{}", &answer[..answer.len().min(600)]);
    let reply = body_of(&answer).as_bytes().to_vec();
    assert!(serde_json::from_slice::<Value>(&reply).is_ok(), "one JSON body: {answer}");
    let load = oha(oha_bin, &format!("http://{addr}/mcp"), &headers, &body, server.id());
    let _ = server.kill();
    let _ = server.wait();
    (load, reply)
}

/// The floor answering `reply` to the same requests (its memory and CPU are this process's,
/// not shown).
fn bare(oha_bin: &Path, reply: Vec<u8>) -> Load {
    let floor = floor::start(move |_| reply.clone());
    let (body, headers) = stateless_read();
    let url = format!("http://{}/mcp", floor.addr);
    oha(oha_bin, &url, &headers, &body, std::process::id())
}

/// The everything server's `echo` of a 4 KiB message, on a session opened first.
fn everything(oha_bin: &Path, entry: &Path) -> Result<Load, String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut node = Command::new("node")
        .arg(entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("node: {e}"))?;
    let guard = Kill(&mut node);
    let mut lines = BufReader::new(guard.0.stderr.take().unwrap()).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("listening on port") => break,
            Some(Ok(_)) => {}
            _ => return Err("the everything server did not start".to_owned()),
        }
    }
    std::thread::spawn(move || for _ in lines {});
    let addr = format!("127.0.0.1:{port}");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "oha", "version": "1"}}});
    let answer = post(&addr, &["MCP-Protocol-Version: 2025-06-18".to_owned()], &init.to_string());
    let session = answer
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id").then(|| v.trim().to_owned())
        })
        .ok_or_else(|| format!("no session id: {}", &answer[..answer.len().min(300)]))?;
    let headers = vec![
        "Content-Type: application/json".to_owned(),
        "Accept: application/json, text/event-stream".to_owned(),
        "MCP-Protocol-Version: 2025-06-18".to_owned(),
        format!("Mcp-Session-Id: {session}"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(&addr, &headers, initialized);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"message": "x".repeat(4096)}}})
    .to_string();
    let answer = post(&addr, &headers, &body);
    if !answer.contains("Echo: xxxx") {
        return Err(format!("echo failed: {}", &answer[..answer.len().min(300)]));
    }
    let pid = guard.0.id();
    Ok(oha(oha_bin, &format!("http://{addr}/mcp"), &headers, &body, pid))
}

/// Kills the child when dropped.
struct Kill<'a>(&'a mut Child);

impl Drop for Kill<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let tools = common::bench_tools();
    let oha_bin = tools.join("bin/oha");
    if !oha_bin.exists() {
        missing(ROW, &format!("no {} (scripts/bench setup installs oha)", oha_bin.display()));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (ours, reply) = codespace(&oha_bin, tmp.path());
    println!("CodeSpace: {}", describe(&ours));
    let bare = bare(&oha_bin, reply);
    println!(
        "floor (bare axum, same reply): {:.0} calls/s, p99 {:.1} ms; CodeSpace at {:.2}x its rate",
        bare.per_sec,
        bare.p99_ms,
        ours.per_sec / bare.per_sec
    );
    let entry: PathBuf =
        tools.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let peer = match entry.exists() {
        true => everything(&oha_bin, &entry),
        false => Err(format!("no {} (scripts/bench setup installs it)", entry.display())),
    };
    let target = verdict(
        ">= 5,000/s, p99 < 20 ms, RSS < 64 MiB",
        ours.per_sec >= 5000.0
            && ours.p99_ms < 20.0
            && ours.peak_kib < 64 * 1024
            && ours.ok == ours.total,
    );
    match peer {
        Ok(p) => {
            println!("server-everything echo 4 KiB: {}", describe(&p));
            row(
                ROW,
                &describe(&ours),
                &format!("server-everything echo 4 KiB: {}", describe(&p)),
                &format!("{:.2}x calls/s", ours.per_sec / p.per_sec),
                &target,
            );
        }
        Err(why) => row(ROW, &describe(&ours), &format!("missing: {why}"), "", &target),
    }
}
