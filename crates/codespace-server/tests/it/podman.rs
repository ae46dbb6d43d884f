//! The image and the Kubernetes manifest, for real: `scripts/image` builds
//! `localhost/codespace:dev`, `podman kube play` runs `deploy/kubernetes/codespace.yaml`
//! (its port published on 127.0.0.1 only), and an MCP session over HTTP runs a command in
//! the externally isolated workspace and applies a patch; `/metrics` counts them; after the
//! pod is torn down and played again the patch is still in `operation_status` (the ledger
//! is on the volume); and SIGTERM drains the server to exit 0 well inside the pod's grace.
//! Podman runs with `runc` and explicit ulimits from this test's own `containers.conf`.
//! Without podman the test fails under `CODESPACE_REQUIRE_SANDBOX=1` (CI) and says it did
//! not run otherwise.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Client, Env, bin, call, raw_http};

/// The container `podman kube play` makes of the Deployment.
const CONTAINER: &str = "codespace-pod-0-codespace";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[expect(clippy::disallowed_methods, reason = "reads CODESPACE_REQUIRE_SANDBOX")]
fn podman_present() -> bool {
    let ok = Command::new("podman").arg("--version").output().is_ok_and(|o| o.status.success());
    let required = std::env::var("CODESPACE_REQUIRE_SANDBOX").as_deref() == Ok("1");
    assert!(
        ok || !required,
        "podman is missing (scripts/test installs it); CODESPACE_REQUIRE_SANDBOX=1"
    );
    if !ok {
        eprintln!("podman::* DID NOT RUN: podman is missing (apt-get install podman runc)");
    }
    ok
}

/// A hard limit of this process (`ulimit -H<flag>`), capped: runc may lower a limit but
/// not raise it without CAP_SYS_RESOURCE, so the container's limits are set at or below it.
fn limit(flag: &str) -> u64 {
    let out = Command::new("sh").args(["-c", &format!("ulimit -H{flag}")]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse::<u64>().unwrap_or(u64::MAX).min(8192)
}

struct Podman {
    conf: PathBuf,
}

impl Podman {
    fn new(dir: &Path) -> Podman {
        let conf = dir.join("containers.conf");
        let (nofile, nproc) = (limit("n"), limit("u"));
        std::fs::write(
            &conf,
            format!(
                "[containers]\ndefault_ulimits = [\"nofile={nofile}:{nofile}\", \"nproc={nproc}:{nproc}\"]\n\
                 [engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n"
            ),
        )
        .unwrap();
        Podman { conf }
    }

    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("CONTAINERS_CONF", &self.conf);
        c
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        self.cmd("podman").args(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "podman {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Removes what a play of the manifest leaves (a pod, its secret, its volumes).
    fn clean(&self, manifest: &Path, volumes: bool) {
        let _ = self.run(&["kube", "down", manifest.to_str().unwrap()]);
        let _ = self.run(&["secret", "rm", "codespace-token"]);
        if volumes {
            let _ = self.run(&["volume", "rm", "-f", "codespace-state", "codespace-work"]);
        }
    }

    fn play(&self, manifest: &Path) {
        let _ = self.run(&["secret", "rm", "codespace-token"]);
        self.ok(&["kube", "play", manifest.to_str().unwrap()]);
    }
}

fn wait_ready(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if TcpStream::connect(addr).is_ok() {
            let r = raw_http(
                addr,
                b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            );
            if r.status == 200 {
                return;
            }
        }
        assert!(Instant::now() < deadline, "the pod was not ready within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The bearer token as the pod sees it: podman 4.3 mounts a Secret's value still base64
/// encoded (Kubernetes decodes it), so the test reads what the server reads.
fn token(podman: &Podman) -> String {
    podman.ok(&["exec", CONTAINER, "cat", "/run/secrets/codespace/token"]).trim().to_owned()
}

async fn client(addr: &str, token: String) -> Client {
    use rmcp::ServiceExt as _;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
        .auth_header(token);
    ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("http initialize")
}

/// The manifest with the pod's port published on 127.0.0.1 only, at `port`, and that
/// `Host` accepted.
fn test_manifest(dir: &Path, port: u16) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("deploy/kubernetes/codespace.yaml")).unwrap();
    let published = format!(
        "containerPort: 8787\n              hostIP: 127.0.0.1\n              hostPort: {port}"
    );
    assert!(text.contains("containerPort: 8787"));
    // The Host a client of the published port sends names that port, not the pod's 8787.
    let allowed = format!("- \"20\"\n            - --allowed-host\n            - 127.0.0.1:{port}");
    assert!(text.contains("- \"20\""));
    let text = text.replace("containerPort: 8787", &published).replace("- \"20\"", &allowed);
    let path = dir.join("codespace.yaml");
    std::fs::write(&path, &text).unwrap();
    // For a restart: the claims' volumes exist already (podman 4.3 refuses to make them again).
    let pod_only: Vec<&str> =
        text.split("\n---\n").filter(|d| !d.contains("kind: PersistentVolumeClaim")).collect();
    std::fs::write(dir.join("codespace-pod.yaml"), pod_only.join("\n---\n")).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn the_image_runs_the_manifest_under_podman_and_keeps_its_ledger_across_restarts() {
    if !podman_present() {
        return;
    }
    let env = Env::new();
    let podman = Podman::new(env.path());
    let binaries = Path::new(bin()).parent().unwrap();
    let built = podman
        .cmd(repo().join("scripts/image").to_str().unwrap())
        .arg("--debug")
        .env("CODESPACE_IMAGE_BINARIES", binaries)
        .output()
        .unwrap();
    assert!(built.status.success(), "scripts/image: {}", String::from_utf8_lossy(&built.stderr));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let manifest = test_manifest(env.path(), port);
    podman.clean(&manifest, true);
    podman.play(&manifest);
    wait_ready(&addr);

    let c = client(&addr, token(&podman)).await;
    let info = call(&c, "workspace_info", json!({"workspace_id": "work"})).await.unwrap();
    assert_eq!(info["execution"]["isolation"]["command_sandbox"], "external", "{info}");
    let r = call(
        &c,
        "exec_command",
        json!({"workspace_id": "work", "command": ["sh", "-c", "id -u; echo from-the-pod | tee seen.txt"], "wait_ms": 10000}),
    )
    .await
    .unwrap();
    let id = r["process_id"].as_str().unwrap().to_owned();
    let out = crate::process::output(&c, &id).await;
    assert!(out.contains("10001") && out.contains("from-the-pod"), "{r} {out}");
    let patch = "*** Begin Patch\n*** Add File: from-mcp.txt\n+patched in the pod\n*** End Patch\n";
    let applied =
        call(&c, "apply_patch", json!({"workspace_id": "work", "patch": patch})).await.unwrap();
    assert_eq!(applied["status"], "applied", "{applied}");
    let op = applied["operation_id"].clone();
    drop(c);
    let metrics =
        raw_http(&addr, b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assert_eq!(metrics.status, 200);
    for needle in [
        "codespace_tool_calls_total{tool=\"apply_patch\"",
        "codespace_tool_calls_total{tool=\"exec_command\"",
    ] {
        assert!(metrics.body.contains(needle), "{needle}: {}", metrics.body);
    }

    // A new pod on the same volumes: the ledger still knows the patch.
    podman.clean(&manifest, false);
    podman.play(&env.path().join("codespace-pod.yaml"));
    wait_ready(&addr);
    let c = client(&addr, token(&podman)).await;
    let status = call(&c, "operation_status", json!({"operation_id": op})).await.unwrap();
    assert_eq!(status["status"], "applied", "{status}");
    let read =
        call(&c, "read", json!({"workspace_id": "work", "path": "from-mcp.txt"})).await.unwrap();
    assert_eq!(read["content"], "patched in the pod\n");
    drop(c);

    // SIGTERM: the server drains and exits 0, well inside the pod's 30 s grace.
    let started = Instant::now();
    podman.ok(&["stop", "-t", "30", CONTAINER]);
    let took = started.elapsed();
    let code = podman.ok(&["inspect", "--format", "{{.State.ExitCode}}", CONTAINER]);
    assert_eq!(code.trim(), "0", "exit status after SIGTERM");
    assert!(took < Duration::from_secs(25), "drained in {took:?}");
    podman.clean(&manifest, true);
}
