//! Helpers shared by the benchmarks: medians, the built binary, a tool call.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;

pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The `codespace` binary the bench profile builds beside the bench executable.
pub(crate) fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("codespace");
    assert!(bin.exists(), "{} missing: run `cargo bench -p codespace-server`", bin.display());
    bin
}

/// `codespace serve --config CONFIG EXTRA...` with its state in `state`, as an rmcp child
/// process transport (every benchmark's server over stdio).
#[allow(dead_code, reason = "not every benchmark starts its server through rmcp")]
pub(crate) fn server<S: AsRef<std::ffi::OsStr>>(
    config: &Path,
    state: &Path,
    extra: &[S],
) -> rmcp::transport::TokioChildProcess {
    use rmcp::transport::ConfigureCommandExt;
    let command = tokio::process::Command::new(binary()).configure(|c| {
        c.args(["serve", "--config"])
            .arg(config)
            .args(extra)
            .env("XDG_STATE_HOME", state)
            .env("RUST_LOG", "error");
    });
    rmcp::transport::TokioChildProcess::new(command).unwrap()
}

/// A bare line-oriented JSON-RPC client on a started server's stdio (no rmcp on the
/// client side), initialized.
#[allow(dead_code, reason = "not every benchmark needs a bare client")]
pub(crate) struct BareClient {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    line: String,
    next_id: u64,
}

#[allow(dead_code, reason = "not every benchmark needs a bare client")]
impl BareClient {
    pub(crate) fn start(config: &Path, state: &Path) -> BareClient {
        BareClient::launch::<&str>(config, state, &[], false)
    }

    /// `codespace serve --config CONFIG EXTRA...`, initialized; with `structured_only`, the
    /// session declares `codespace/structuredContentOnly`.
    pub(crate) fn launch<S: AsRef<std::ffi::OsStr>>(
        config: &Path,
        state: &Path,
        extra: &[S],
        structured_only: bool,
    ) -> BareClient {
        let mut child = std::process::Command::new(binary())
            .args(["serve", "--config"])
            .arg(config)
            .args(extra)
            .env("XDG_STATE_HOME", state)
            .env("RUST_LOG", "error")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut client = BareClient { child, stdin, stdout, line: String::new(), next_id: 1 };
        let capabilities = match structured_only {
            true => serde_json::json!({"experimental": {"codespace/structuredContentOnly": {}}}),
            false => serde_json::json!({}),
        };
        let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": {"name": "bare", "version": "1"}}});
        client.request(&init.to_string());
        client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    /// Calls a tool and returns its `structuredContent`; a refusal fails the benchmark.
    pub(crate) fn call(&mut self, name: &str, args: Value) -> Value {
        self.next_id += 1;
        let msg = serde_json::json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": name, "arguments": args}});
        let mut answer: Value = serde_json::from_str(self.request(&msg.to_string())).unwrap();
        assert_ne!(answer["result"]["isError"], true, "{name}: {answer}");
        answer["result"]["structuredContent"].take()
    }

    fn send(&mut self, msg: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{msg}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns the next line, its answer.
    pub(crate) fn request(&mut self, msg: &str) -> &str {
        use std::io::BufRead;
        self.send(msg);
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        &self.line
    }

    /// The median of `rounds` pings.
    pub(crate) fn ping(&mut self, rounds: usize) -> Duration {
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            self.next_id += 1;
            let ping = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, self.next_id);
            let t = std::time::Instant::now();
            let answer = self.request(&ping);
            times.push(t.elapsed());
            assert!(answer.contains("\"result\""), "{answer}");
        }
        median(times)
    }
}

impl Drop for BareClient {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// Calls a tool and returns its structuredContent; a refusal fails the benchmark.
#[allow(dead_code, reason = "not every benchmark calls tools through this")]
pub(crate) async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    args: Value,
) -> Value {
    let Value::Object(map) = args else { unreachable!("arguments are an object") };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(map))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
    r.structured_content.unwrap()
}

/// A client that declares `codespace/structuredContentOnly`: each success arrives once, as
/// `structuredContent`, without the text copy.
#[allow(dead_code, reason = "not every benchmark compares the two shapes")]
pub(crate) fn structured_only() -> ClientConfig {
    let experimental = [("codespace/structuredContentOnly".to_owned(), Default::default())];
    let capabilities =
        ClientCapabilities::builder().enable_experimental_with(experimental.into()).build();
    ClientConfig::new(capabilities, rmcp::model::Implementation::new("bench", "1"))
}

/// `exec_command ["true"]` in `ws`, then `process_status` with `wait_ms` until `exited`;
/// the time it all took.
#[allow(dead_code, reason = "not every benchmark runs commands")]
pub(crate) async fn true_until_exited<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    ws: &str,
) -> std::time::Duration {
    let t = std::time::Instant::now();
    let r =
        call(client, "exec_command", serde_json::json!({"workspace_id": ws, "command": ["true"]}))
            .await;
    let id = r["process_id"].as_str().unwrap().to_owned();
    loop {
        let args = serde_json::json!({"process_id": id, "wait_ms": 30000});
        let st = call(client, "process_status", args).await;
        if st["state"] == "exited" {
            assert_eq!(st["exit_code"], 0, "{st}");
            return t.elapsed();
        }
    }
}

/// The string one file in 97 of [`build_tree`]'s tree holds.
#[allow(dead_code, reason = "not every benchmark builds the tree")]
pub(crate) const NEEDLE: &str = "codespace_bench_needle";

/// 20,000 files (half `.rs`) of 40 lines in 2,000 directories; returns their paths.
#[allow(dead_code, reason = "not every benchmark builds the tree")]
pub(crate) fn build_tree(root: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    for d in 0..2000 {
        let rel = format!("m{:02}/d{d:04}", d % 40);
        let dir = root.join(&rel);
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..10 {
            let ext = if f % 2 == 0 { "rs" } else { "txt" };
            let mut body = String::with_capacity(2048);
            for line in 0..40 {
                body.push_str(&format!("fn item_{d}_{f}_{line}() {{ let value = {line}; }}\n"));
            }
            if (d * 10 + f) % 97 == 0 {
                body.push_str(&format!("// {NEEDLE}\n"));
            }
            std::fs::write(dir.join(format!("f{f}.{ext}")), body).unwrap();
            paths.push(format!("{rel}/f{f}.{ext}"));
        }
    }
    paths
}

/// One row of the speed table `scripts/bench` prints, as a tab-separated line it collects:
/// the row, this server's figure, the floor or peer measured in the same run, the ratio and
/// the target (with whether it is met).
#[allow(dead_code, reason = "not every benchmark prints a table row")]
pub(crate) fn row(name: &str, ours: &str, floor: &str, ratio: &str, target: &str) {
    println!("row\t{name}\t{ours}\t{floor}\t{ratio}\t{target}");
}

/// A row that could not be measured, and why (never left out silently).
#[allow(dead_code, reason = "not every benchmark prints a table row")]
pub(crate) fn missing(name: &str, why: &str) {
    println!("row\t{name}\tmissing: {why}");
}

/// `met` or `missed`, after a target.
#[allow(dead_code, reason = "not every benchmark prints a table row")]
pub(crate) fn verdict(target: &str, met: bool) -> String {
    format!("{target}: {}", if met { "met" } else { "missed" })
}

/// A duration in milliseconds, three decimals.
#[allow(dead_code, reason = "not every benchmark prints a table row")]
pub(crate) fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// `a / b` as `N.NNx`.
#[allow(dead_code, reason = "not every benchmark prints a table row")]
pub(crate) fn times(a: Duration, b: Duration) -> String {
    format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64())
}

/// Where `scripts/bench` installs the peers and tools (`CODESPACE_BENCH_TOOLS`, by default
/// `target/bench-tools`).
#[allow(dead_code, reason = "not every benchmark needs a peer")]
pub(crate) fn bench_tools() -> PathBuf {
    std::env::var_os("CODESPACE_BENCH_TOOLS").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-tools")
    })
}

/// The official Python MCP SDK's interpreter (`CODESPACE_PYTHON`, by default the test
/// tools' venv), if it imports `mcp`.
#[allow(dead_code, reason = "not every benchmark drives the Python SDK")]
pub(crate) fn python() -> Option<PathBuf> {
    let path = std::env::var_os("CODESPACE_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-tools/venv/bin/python")
    });
    let ok = std::process::Command::new(&path).args(["-c", "import mcp"]).output();
    ok.is_ok_and(|o| o.status.success()).then_some(path)
}

/// Resident memory of `pid` now and at its peak, in KiB (`VmRSS`, `VmHWM`).
#[allow(dead_code, reason = "not every benchmark reads memory")]
pub(crate) fn rss_and_peak_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
