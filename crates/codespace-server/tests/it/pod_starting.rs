//! `/readyz` while the server starts, through the real binary: the listener is bound before
//! the ledger is opened, so while another writer holds the ledger locked the server is
//! still starting and says so (`/livez` 200, `/readyz` 503 `starting`, `/mcp` 503
//! `starting`); once the writer lets go the server finishes starting and `/readyz` turns
//! 200.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, raw_http};

fn get(addr: &str, path: &str) -> (u16, Value) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let r = raw_http(addr, request.as_bytes());
    (r.status, serde_json::from_str(&r.body).unwrap_or(Value::Null))
}

/// A port no one listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something accepts connections at `addr`.
fn wait_listening(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "nothing listens at {addr}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn readyz_answers_starting_while_the_ledger_is_held_by_another_writer() {
    let mut env = Env::new();
    env.workspace("w", json!({"profile": "read-only"}));
    let ledger = env.path().join("ledger.sqlite3");
    let holder = rusqlite::Connection::open(&ledger).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE; CREATE TABLE held (x); ").unwrap();

    let port = free_port().to_string();
    let mut server = env
        .command()
        .args(["serve", "--http", "--port", &port, "--token", "starting-token"])
        .arg("--config")
        .arg(env.config())
        .arg("--operations-db")
        .arg(&ledger)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = format!("127.0.0.1:{port}");
    wait_listening(&addr);
    let (status, body) = get(&addr, "/readyz");
    assert_eq!((status, &body["state"]), (503, &json!("starting")), "{body}");
    assert_eq!(get(&addr, "/livez").0, 200);
    let (status, body) = get(&addr, "/mcp");
    assert_eq!((status, &body["error"]), (503, &json!("starting")), "{body}");

    // The other writer lets go: the server opens the ledger, recovers, and is ready.
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    // Its stderr is read to the end (a closed pipe would fail the server's next line).
    let stderr = BufReader::new(server.stderr.take().unwrap());
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || stderr.lines().map_while(Result::ok).try_for_each(|l| tx.send(l)));
    let mut seen = Vec::new();
    while !seen.last().is_some_and(|l: &String| l.starts_with("listening on")) {
        let line = lines.recv_timeout(Duration::from_secs(30));
        seen.push(line.unwrap_or_else(|e| panic!("no listening line ({e}): {seen:?}")));
    }
    let (status, body) = get(&addr, "/readyz");
    assert_eq!((status, &body["state"]), (200, &json!("serving")), "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}
