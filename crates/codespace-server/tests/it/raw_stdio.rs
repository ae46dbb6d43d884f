//! A bare line-oriented JSON-RPC client on the server's stdio, for tests that send raw
//! frames (malformed ones included) or kill the server mid-request.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::support::Env;

/// A bare line-oriented JSON-RPC client on the server's stdio, for tests that send raw
/// frames or kill the server mid-request.
pub struct RawStdio {
    pub child: Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl RawStdio {
    /// Starts `codespace serve --config <registry> <extra...>` and completes the handshake.
    pub fn start(env: &Env, extra: &[&std::ffi::OsStr]) -> RawStdio {
        RawStdio::start_command(serve(env, extra))
    }

    /// Starts `cmd` (a `codespace serve` on stdio, its stderr as the caller set it) and
    /// completes the handshake.
    pub fn start_command(cmd: Command) -> RawStdio {
        let mut raw = RawStdio::spawn_command(cmd);
        raw.send(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}));
        let init = raw.recv().expect("initialize answered");
        assert_eq!(init["result"]["serverInfo"]["name"], "codespace", "{init}");
        raw.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        raw
    }

    /// Starts the server with no handshake at all.
    pub fn spawn(env: &Env, extra: &[&std::ffi::OsStr]) -> RawStdio {
        RawStdio::spawn_command(serve(env, extra))
    }

    fn spawn_command(mut cmd: Command) -> RawStdio {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        RawStdio { child, stdin, stdout }
    }

    pub fn send_line(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn send(&mut self, v: &Value) {
        self.send_line(&v.to_string());
    }

    /// The next stdout message that is not a log notification; None at end of output.
    pub fn recv(&mut self) -> Option<Value> {
        loop {
            let v = self.recv_any()?;
            if v["method"] != "notifications/message" {
                return Some(v);
            }
        }
    }

    /// The next stdout line as JSON (every line must be JSON); None at end of output.
    pub fn recv_any(&mut self) -> Option<Value> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}")),
        )
    }

    /// Writes raw bytes and a newline: for frames that are not valid text.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Closes stdin (EOF) and waits for the server to exit.
    pub fn finish(self) -> std::process::ExitStatus {
        let RawStdio { mut child, stdin, .. } = self;
        drop(stdin);
        child.wait().unwrap()
    }
}

/// `codespace serve --config <registry> <extra...>`.
fn serve(env: &Env, extra: &[&std::ffi::OsStr]) -> Command {
    let mut cmd = env.command();
    cmd.args(["serve", "--config"]).arg(env.config()).args(extra);
    cmd
}
