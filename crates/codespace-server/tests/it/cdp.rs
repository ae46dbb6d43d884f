//! A headless Chromium driven over its DevTools protocol, for the page tests: the browser
//! started with a private profile on a free port, and a minimal WebSocket client (text
//! frames, masked as a client must) speaking CDP to one page.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The browser binary: `CODESPACE_CHROMIUM`, else `chromium` on the PATH. `None` when
/// there is none; under `CODESPACE_REQUIRE_SANDBOX=1` (CI) that is a failure, not a skip.
pub fn chromium() -> Option<PathBuf> {
    let given = std::env::var_os("CODESPACE_CHROMIUM").map(PathBuf::from);
    let found = given.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join("chromium"))
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
    });
    if found.is_none() && std::env::var_os("CODESPACE_REQUIRE_SANDBOX").is_some_and(|v| v == "1") {
        panic!(
            "CODESPACE_REQUIRE_SANDBOX=1 and no chromium: the page test needs Debian's chromium \
             (scripts/test installs it; or set CODESPACE_CHROMIUM)"
        );
    }
    found
}

/// A running headless browser; killed on drop.
pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    port: u16,
}

impl Browser {
    pub fn start(program: &std::path::Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(program)
            .args([
                "--headless",
                // The test runs as root in CI, where Chromium's own sandbox cannot start.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    // Keep draining so the browser never blocks on a full pipe.
                    continue;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        let port = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("chromium did not start its DevTools: {seen:?}"));
            if let Some(rest) = line.split("DevTools listening on ws://").nth(1) {
                let hostport = rest.split('/').next().unwrap();
                break hostport.rsplit(':').next().unwrap().parse().unwrap();
            }
            seen.push(line);
        };
        Browser { child, _profile: profile, port }
    }

    /// A DevTools connection to the browser's first page.
    pub fn page(&self) -> Page {
        let addr = format!("127.0.0.1:{}", self.port);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let body = get_json_list(&addr);
            let list: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let url = list.as_array().and_then(|pages| {
                pages.iter().find(|p| p["type"] == "page")?["webSocketDebuggerUrl"].as_str()
            });
            if let Some(url) = url {
                return Page::connect(url);
            }
            assert!(Instant::now() < deadline, "no page target: {body}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `GET /json/list` of the DevTools HTTP endpoint, read up to its Content-Length (the
/// browser does not close the connection after answering).
fn get_json_list(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("GET /json/list HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(s);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    String::from_utf8(body).unwrap()
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One page's DevTools session.
pub struct Page {
    ws: TcpStream,
    next_id: u64,
    /// Every event received so far, by method name.
    pub events: Vec<Value>,
}

impl Page {
    fn connect(url: &str) -> Page {
        let rest = url.strip_prefix("ws://").unwrap();
        let (addr, path) = rest.split_once('/').unwrap();
        let mut ws = TcpStream::connect(addr).unwrap();
        ws.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let handshake = format!(
            "GET /{path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: Y29kZXNwYWNlLWluYm94IQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        ws.write_all(handshake.as_bytes()).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            ws.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "websocket handshake refused: {head}");
        Page { ws, next_id: 0, events: Vec::new() }
    }

    fn send_text(&mut self, text: &str) {
        let payload = text.as_bytes();
        let mut frame = vec![0x81u8];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask: [u8; 4] = rand::random();
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.ws.write_all(&frame).unwrap();
    }

    /// The next whole text message (fragments joined; pings answered).
    fn recv_text(&mut self) -> String {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.ws.read_exact(&mut head).unwrap();
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            let len = match head[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.ws.read_exact(&mut b).unwrap();
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.ws.read_exact(&mut b).unwrap();
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let mut payload = vec![0u8; usize::try_from(len).unwrap()];
            self.ws.read_exact(&mut payload).unwrap();
            match opcode {
                0x8 => panic!("the browser closed the DevTools connection"),
                0x9 => {
                    // Ping: answer with a masked pong carrying the same payload.
                    let mask: [u8; 4] = rand::random();
                    let mut pong = vec![0x8a, 0x80 | payload.len() as u8];
                    pong.extend_from_slice(&mask);
                    pong.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
                    self.ws.write_all(&pong).unwrap();
                }
                0xa => {}
                _ => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message).unwrap();
                    }
                }
            }
        }
    }

    /// Sends one command and returns its result; events meanwhile are kept in `events`.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send_text(&json!({"id": id, "method": method, "params": params}).to_string());
        loop {
            let message: Value = serde_json::from_str(&self.recv_text()).unwrap();
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method}: {error}");
                }
                return message["result"].clone();
            }
            self.events.push(message);
        }
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is truthy; returns how long that took.
    pub fn wait_for(&mut self, expression: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        loop {
            if self.eval(&format!("Boolean({expression})")) == json!(true) {
                return started.elapsed();
            }
            assert!(started.elapsed() < limit, "not true within {limit:?}: {expression}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
