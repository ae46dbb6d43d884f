//! HTTP benchmark, in one run: `ping` from a keep-alive raw HTTP/1.1 client over Streamable
//! HTTP in a 2025-06-18 session against `ping` over stdio (from the rmcp client, and from a
//! bare line client), and a 4 KiB and a 1 MiB `read` over both; on the 2026-07-28 wire,
//! which has no `ping`, a stateless 4 KiB `read` against the same `read` from the bare line
//! client. Each figure is printed as a ratio against the stdio one measured in the same run. The floor beside them: `ping` from the same raw client against a
//! bare axum server that parses the body and answers the pong (`floor`), what HTTP itself
//! costs on this machine.
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

use common::{binary, call, median};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{ClientRequest, PingRequest};
use serde_json::json;

/// A keep-alive HTTP/1.1 connection that posts JSON-RPC messages to `/mcp`.
struct Conn {
    stream: BufReader<TcpStream>,
    addr: String,
    session: Option<String>,
    /// The protocol revision each request names.
    version: &'static str,
}

/// The `_meta` a stateless (2026-07-28) request carries in place of a session.
const STATELESS_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}"#;

impl Conn {
    fn new(stream: TcpStream, addr: String, version: &'static str) -> Conn {
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Conn { stream: BufReader::new(stream), addr, session: None, version }
    }

    fn post(&mut self, body: &str) -> (String, String) {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {}\r\nContent-Length: {}\r\n",
            self.addr,
            self.version,
            body.len()
        );
        if self.version == "2026-07-28" {
            req.push_str(
                "Mcp-Method: tools/call\r\nMcp-Name: read\r\nMcp-Param-Workspace-Id: w\r\n",
            );
        }
        if let Some(s) = &self.session {
            req.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.stream.get_mut().write_all(req.as_bytes()).unwrap();
        let mut content_type = String::new();
        let mut length = None;
        let mut chunked = false;
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-type:") {
                content_type = v.trim().to_owned();
            } else if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse::<usize>().ok();
            } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            } else if let Some(v) = lower.strip_prefix("mcp-session-id:") {
                let _ = v;
                self.session = Some(line["mcp-session-id:".len()..].trim().to_owned());
            }
        }
        let body = if let Some(n) = length {
            let mut buf = vec![0; n];
            self.stream.read_exact(&mut buf).unwrap();
            String::from_utf8(buf).unwrap()
        } else if chunked {
            self.chunked_until_response()
        } else {
            String::new()
        };
        (content_type, body)
    }

    /// Reads chunks until a complete SSE event with data has arrived (a stream stays open).
    fn chunked_until_response(&mut self) -> String {
        let mut body = String::new();
        loop {
            let mut size = String::new();
            self.stream.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut buf = vec![0; n + 2];
            self.stream.read_exact(&mut buf).unwrap();
            body.push_str(&String::from_utf8_lossy(&buf[..n]));
            if n == 0 || body.contains("\"result\"") && body.ends_with("\n\n") {
                return body;
            }
        }
    }
}

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("small.txt"), "x".repeat(4096)).unwrap();
    std::fs::write(ws.join("big.txt"), "y".repeat(1 << 20)).unwrap();
    let config = tmp.path().join("reg.json");
    let registry = json!({"workspaces": {"w": {"root": ws.display().to_string()}}});
    std::fs::write(&config, registry.to_string()).unwrap();
    let state = tmp.path().join("state");

    let client = ().serve(common::server::<&str>(&config, &state, &[])).await.unwrap();
    let mut stdio_ping = Vec::new();
    let (mut stdio_small, mut stdio_big) = (Vec::new(), Vec::new());
    for _ in 0..300 {
        let t = Instant::now();
        client.send_request(ClientRequest::PingRequest(PingRequest::default())).await.unwrap();
        stdio_ping.push(t.elapsed());
    }
    for _ in 0..100 {
        let t = Instant::now();
        call(&client, "read", json!({"workspace_id": "w", "path": "small.txt"})).await;
        stdio_small.push(t.elapsed());
        let t = Instant::now();
        call(&client, "read", json!({"workspace_id": "w", "path": "big.txt"})).await;
        stdio_big.push(t.elapsed());
    }
    client.cancel().await.unwrap();
    let mut bare = common::BareClient::start(&config, &state);
    let bare_ping = bare.ping(300);
    let read_small = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"workspace_id":"w","path":"small.txt"}}}"#;
    let mut bare_small = Vec::new();
    for _ in 0..100 {
        let t = Instant::now();
        let answer = bare.request(read_small);
        bare_small.push(t.elapsed());
        assert!(answer.contains("structuredContent"), "{answer}");
    }
    drop(bare);

    let mut server = Command::new(binary())
        .args(["serve", "--http", "--port", "0", "--no-auth", "--config"])
        .arg(&config)
        .env("XDG_STATE_HOME", &state)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the server says where it listens").unwrap();
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest
                .trim_end_matches("/mcp")
                .split_whitespace()
                .next()
                .unwrap()
                .trim_end_matches("/mcp")
                .to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let mut conn = Conn::new(TcpStream::connect(&addr).unwrap(), addr.clone(), "2025-06-18");
    let (_, init) = conn.post(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#);
    assert!(init.contains("codespace"), "{init}");
    conn.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let mut http_ping = Vec::new();
    let mut kind = String::new();
    for i in 1..=300 {
        let t = Instant::now();
        let (ct, body) = conn.post(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#));
        http_ping.push(t.elapsed());
        assert!(body.contains("\"result\""), "{body}");
        kind = ct;
    }
    let (mut http_small, mut http_big) = (Vec::new(), Vec::new());
    for i in 0..100 {
        for (path, times) in [("small.txt", &mut http_small), ("big.txt", &mut http_big)] {
            let msg = json!({"jsonrpc":"2.0","id":1000 + i,"method":"tools/call","params":{"name":"read","arguments":{"workspace_id":"w","path":path}}});
            let t = Instant::now();
            let (_, body) = conn.post(&msg.to_string());
            times.push(t.elapsed());
            assert!(body.contains("structuredContent"), "{}", &body[..body.len().min(300)]);
        }
    }
    // The current revision has no `ping` (rmcp answers it -32601 outside a session): there,
    // each POST is a self-contained call, timed as a 4 KiB `read` against the same read by a
    // bare line client over stdio.
    let mut stateless = Conn::new(TcpStream::connect(&addr).unwrap(), addr.clone(), "2026-07-28");
    let mut stateless_small = Vec::new();
    for i in 1..=100 {
        let msg = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"read","arguments":{{"workspace_id":"w","path":"small.txt"}},{STATELESS_META}}}}}"#
        );
        let t = Instant::now();
        let (_, body) = stateless.post(&msg);
        stateless_small.push(t.elapsed());
        assert!(body.contains("structuredContent"), "{body}");
    }
    let _ = server.kill();
    let _ = server.wait();
    let bare = floor::start(floor::pong);
    let addr = bare.addr.to_string();
    let mut conn = Conn::new(TcpStream::connect(bare.addr).unwrap(), addr, "2025-06-18");
    let mut floor_ping = Vec::new();
    for i in 1..=300 {
        let t = Instant::now();
        let (_, body) = conn.post(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#));
        floor_ping.push(t.elapsed());
        assert!(body.contains("\"result\""), "{body}");
    }
    drop(bare);

    let (sp, hp) = (median(stdio_ping), median(http_ping));
    let fp = median(floor_ping);
    println!(
        "ping: keep-alive raw HTTP {hp:?} vs the bare axum floor {fp:?}: {:.2}x; the floor is {:.2}x a bare line client's stdio {bare_ping:?}",
        hp.as_secs_f64() / fp.as_secs_f64(),
        fp.as_secs_f64() / bare_ping.as_secs_f64()
    );
    println!(
        "ping: keep-alive raw HTTP ({kind}) {hp:?} vs stdio (rmcp client) {sp:?}: {:.2}x (target <= 2x)",
        hp.as_secs_f64() / sp.as_secs_f64()
    );
    // Client for client: a bare HTTP client against a bare stdio one.
    println!(
        "ping: keep-alive raw HTTP {hp:?} vs a bare line client's stdio {bare_ping:?}: {:.2}x (target <= 2x)",
        hp.as_secs_f64() / bare_ping.as_secs_f64()
    );
    let (bare_small, stateless_small) = (median(bare_small), median(stateless_small));
    for (name, ours, floor, floor_time) in [
        ("HTTP `ping`, raw keep-alive client (2025-06-18 session)", hp, "`ping`", bare_ping),
        (
            "HTTP `read` 4 KiB, raw keep-alive client (2026-07-28 stateless: no `ping`)",
            stateless_small,
            "`read` 4 KiB",
            bare_small,
        ),
    ] {
        let ratio = ours.as_secs_f64() / floor_time.as_secs_f64();
        common::row(
            name,
            &common::ms(ours),
            &format!("raw stdio {floor} {}", common::ms(floor_time)),
            &format!("{ratio:.2}x"),
            &common::verdict("<= 3x", ratio <= 3.0),
        );
    }
    for (what, s, h) in [("4 KiB", stdio_small, http_small), ("1 MiB", stdio_big, http_big)] {
        let (s, h) = (median(s), median(h));
        println!(
            "read {what}: HTTP {h:?} vs stdio {s:?}: {:.2}x; stdio read / stdio ping {:.2}x",
            h.as_secs_f64() / s.as_secs_f64(),
            s.as_secs_f64() / sp.as_secs_f64()
        );
    }
}
