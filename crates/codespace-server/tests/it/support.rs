//! Test support: temporary workspaces and registries, the real `codespace` binary over stdio
//! (rmcp client) and over HTTP (rmcp client and a raw HTTP/1.1 client).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tempfile::TempDir;

pub use crate::raw_stdio::RawStdio;

pub type Client = RunningService<RoleClient, ()>;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_codespace")
}

/// The server with test faults armed from `CODESPACE_TEST_WORKER_*` variables (the
/// `fault-server` example, beside the binary: `target/<profile>/examples/`). It is built once
/// per test run, so a run that selected only this test binary still gets a fresh one.
pub fn fault_bin() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile_dir = Path::new(bin()).parent().unwrap();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut build = Command::new(cargo);
            build.args(["build", "-p", "codespace-server", "--example", "fault-server"]);
            if profile_dir.ends_with("release") {
                build.arg("--release");
            }
            let out = build.current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
            assert!(
                out.status.success(),
                "building the fault-server example failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let path = profile_dir.join("examples/fault-server");
            assert!(path.exists(), "{} is missing after its build", path.display());
            path
        })
        .clone()
}

/// Every `CODESPACE_*` variable of this test process's environment. None reaches a server
/// the tests start, so a developer's shell cannot change a result; a test that needs one
/// sets it explicitly.
pub fn codespace_vars() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| name.as_encoded_bytes().starts_with(b"CODESPACE_"))
        .collect()
}

/// The runner every started server uses: `CODESPACE_IT_RUNNER=uds` runs the whole suite
/// with the runner in a worker process (`CODESPACE_RUNNER=uds`), in-process otherwise.
pub fn it_runner() -> Option<String> {
    std::env::var("CODESPACE_IT_RUNNER").ok().filter(|v| !v.is_empty())
}

/// A scratch area holding workspaces, a registry file and a private state directory.
pub struct Env {
    pub dir: TempDir,
    workspaces: BTreeMap<String, Value>,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::Builder::new().prefix("codespace-e2e-").tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/secret.txt"), "TOP-SECRET\n").unwrap();
        Env { dir, workspaces: BTreeMap::new() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Adds a workspace directory `id` with `entry` (its registry object minus the root).
    pub fn workspace(&mut self, id: &str, mut entry: Value) -> PathBuf {
        let root = self.path().join("ws").join(id);
        std::fs::create_dir_all(&root).unwrap();
        entry["root"] = json!(root.display().to_string());
        self.workspaces.insert(id.to_owned(), entry);
        root
    }

    /// The registry's workspace entries, for a test that changes them before writing it
    /// again with [`Env::config`].
    pub fn workspaces_mut(&mut self) -> &mut BTreeMap<String, Value> {
        &mut self.workspaces
    }

    pub fn raw_workspace(&mut self, id: &str, entry: Value) {
        self.workspaces.insert(id.to_owned(), entry);
    }

    /// Writes the registry (with a `box` linux-container environment) and returns its path.
    pub fn config(&self) -> PathBuf {
        let doc = json!({
            "environments": {"box": {"kind": "linux-container"}},
            "workspaces": self.workspaces,
        });
        let path = self.path().join("registry.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        path
    }

    pub fn state(&self) -> PathBuf {
        self.path().join("state")
    }

    /// A `codespace` command with a private state directory and no inherited `CODESPACE_*`
    /// variable.
    pub fn command(&self) -> Command {
        self.command_of(Path::new(bin()))
    }

    /// [`Env::command`] for another build of the binary.
    pub fn command_of(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        for name in codespace_vars() {
            c.env_remove(name);
        }
        c.env("XDG_STATE_HOME", self.state()).env("RUST_LOG", "warn");
        if let Some(runner) = it_runner() {
            c.env("CODESPACE_RUNNER", runner);
        }
        c
    }

    /// Starts `codespace serve --config <registry>` over stdio with an rmcp client.
    pub async fn stdio(&self) -> Client {
        self.stdio_with(&[]).await.0
    }

    /// Like [`Env::stdio`], with extra environment variables; also returns the server's pid.
    pub async fn stdio_with(&self, vars: &[(&str, &str)]) -> (Client, u32) {
        self.stdio_of(Path::new(bin()), vars).await
    }

    /// [`Env::stdio_with`] for another build of the server (the fault server, say).
    pub async fn stdio_of(&self, program: &Path, vars: &[(&str, &str)]) -> (Client, u32) {
        let config = self.config();
        let state = self.state();
        let transport =
            TokioChildProcess::new(tokio::process::Command::new(program).configure(|c| {
                for name in codespace_vars() {
                    c.env_remove(name);
                }
                c.arg("serve")
                    .arg("--config")
                    .arg(&config)
                    .env("XDG_STATE_HOME", &state)
                    .env("RUST_LOG", "warn")
                    .envs(it_runner().map(|r| ("CODESPACE_RUNNER".to_owned(), r)))
                    .envs(vars.iter().map(|(k, v)| (*k, *v)))
                    .stderr(Stdio::inherit());
            }))
            .unwrap();
        let pid = transport.id().expect("server pid");
        (().serve(transport).await.expect("stdio initialize"), pid)
    }

    /// Starts `codespace serve --http --port 0` with `extra` flags; waits for the address.
    pub fn http(&self, extra: &[&str]) -> HttpServer {
        HttpServer::start(self.http_command(extra))
    }

    /// The command [`Env::http`] starts, for a test that adds to it.
    pub fn http_command(&self, extra: &[&str]) -> Command {
        self.http_command_of(Path::new(bin()), extra)
    }

    /// [`Env::http_command`] for another build of the binary.
    pub fn http_command_of(&self, program: &Path, extra: &[&str]) -> Command {
        let mut cmd = self.command_of(program);
        cmd.arg("serve").arg("--http").arg("--port").arg("0").arg("--config").arg(self.config());
        cmd.args(extra).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        cmd
    }
}

pub struct HttpServer {
    pub child: Child,
    pub addr: String,
    /// Every stderr line up to and including the `listening on` line.
    pub stderr: Vec<String>,
    /// The stderr lines after it, as they come.
    later: std::sync::mpsc::Receiver<String>,
}

impl HttpServer {
    #[allow(
        clippy::zombie_processes,
        reason = "the child moves into HttpServer, whose Drop reaps it"
    )]
    pub fn start(mut cmd: Command) -> HttpServer {
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut lines = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no listening line; stderr: {lines:?}"));
            lines.push(line.clone());
            if let Some(rest) = line.strip_prefix("listening on http://") {
                let addr = rest.strip_suffix("/mcp").unwrap().to_owned();
                return HttpServer { child, addr, stderr: lines, later: rx };
            }
        }
    }

    /// Waits until the server writes a stderr line containing `needle`.
    pub fn wait_for_stderr(&self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.later.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return,
                Ok(_) => {}
                Err(e) => panic!("no stderr line with {needle:?} within {limit:?}: {e}"),
            }
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub async fn client(&self, token: Option<&str>) -> Client {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url());
        if let Some(t) = token {
            config = config.auth_header(t.to_owned());
        }
        ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("http initialize")
    }

    /// Sends raw bytes and returns (status, lowercase headers, body).
    pub fn raw(&self, request: &[u8]) -> RawResponse {
        raw_http(&self.addr, request)
    }

    /// A JSON POST to `path` with the given extra header lines.
    pub fn post(&self, path: &str, headers: &[&str], body: &str) -> RawResponse {
        let mut req = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.addr,
            body.len()
        );
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.raw(req.as_bytes())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub fn raw_http(addr: &str, request: &[u8]) -> RawResponse {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The server may answer (413) before the whole body is sent and close; a write error
    // then is expected, the response is what counts.
    let _ = s.write_all(request);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    parse_response(&buf)
}

fn parse_response(buf: &[u8]) -> RawResponse {
    let text = String::from_utf8_lossy(buf);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    RawResponse { status, headers, body: body.to_owned() }
}

/// Calls a tool; Ok(structuredContent) on success, Err(ErrorBody JSON) on a refusal.
pub async fn call(client: &Client, name: &str, args: Value) -> Result<Value, Value> {
    let r =
        try_call(client, name, args).await.unwrap_or_else(|e| panic!("{name}: protocol error {e}"));
    tool_outcome(r)
}

pub async fn try_call(
    client: &Client,
    name: &str,
    args: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let Value::Object(map) = args else { panic!("arguments must be an object") };
    client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(map)).await
}

pub fn tool_outcome(r: CallToolResult) -> Result<Value, Value> {
    let text =
        r.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
    let text_json: Value = serde_json::from_str(&text).expect("tool text is JSON");
    if r.is_error == Some(true) {
        assert!(r.structured_content.is_none(), "refusals carry only the ErrorBody text");
        Err(text_json)
    } else {
        let structured = r.structured_content.expect("success carries structuredContent");
        assert_eq!(structured, text_json, "text copy equals structuredContent");
        Ok(structured)
    }
}

/// Asserts a refusal with `code` and returns its body.
pub async fn refused(client: &Client, name: &str, args: Value, code: &str) -> Value {
    match call(client, name, args.clone()).await {
        Ok(v) => panic!("{name} {args}: expected {code}, got success {v}"),
        Err(body) => {
            assert_eq!(body["code"], code, "{name} {args}: {body}");
            assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
            body
        }
    }
}

/// Creates a FIFO at `path` (no writer ever opens it).
pub fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// A gateway in this process over `env`'s registry, with a local runner (watchers on) and
/// the ledger `store`: for tests that reach its hooks.
pub fn in_process_gateway(env: &Env, store: codespace_store::Store) -> codespace_gateway::Gateway {
    use codespace_gateway::{Gateway, Workspaces};
    use codespace_process::{Supervisor, SupervisorConfig};
    let text = std::fs::read_to_string(env.config()).unwrap();
    let registry = codespace_policy::Registry::parse(&text).unwrap();
    let workspaces = Workspaces::open(&registry).unwrap();
    let supervisor = Supervisor::new(SupervisorConfig::new(bin()));
    let runner = workspaces
        .local_runner(|roots| codespace_runner::LocalRunner::open(roots, supervisor, true))
        .unwrap();
    Gateway::for_tests(workspaces, runner, std::sync::Arc::new(store), vec![])
}
