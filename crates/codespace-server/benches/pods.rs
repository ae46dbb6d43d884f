//! Scale benchmark: 8 pods on this host (podman, the image `scripts/image` builds from the
//! binaries this bench was built with), each with its own workspace (`sandbox: "external"`) and port on 127.0.0.1,
//! driven concurrently for 5 s by one MCP client each (`read` of a 4 KiB file, and every
//! tenth call an `exec_command ["true"]` waited to its exit). Prints the calls per second
//! of each pod and in all, and each pod's resident memory (the server and its descendants,
//! from /proc) before and after the load. Needs podman and runc (`apt-get install podman
//! runc`); podman runs with `runc` and explicit ulimits (at or below this process's hard
//! limits) from the bench's own `containers.conf`; the pods are removed at the end.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark panics on a setup failure and prints its figures to stdout"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their files on the host filesystem and start podman"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

const PODS: usize = 8;
const TOKEN: &str = "bench-token-0123456789abcdef";
const LOAD: Duration = Duration::from_secs(5);

/// A hard limit of this process (`ulimit -H<flag>`), capped: runc may lower a limit but not
/// raise it without CAP_SYS_RESOURCE, so the containers' limits are set at or below it (a
/// limit above it fails every container's start).
fn limit(flag: &str) -> u64 {
    let out = Command::new("sh").args(["-c", &format!("ulimit -H{flag}")]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse::<u64>().unwrap_or(u64::MAX).min(8192)
}

fn podman(conf: &Path, args: &[&str]) -> String {
    let out = Command::new("podman").env("CONTAINERS_CONF", conf).args(args).output().unwrap();
    assert!(out.status.success(), "podman {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Resident memory of `pid` and every descendant, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let status = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0);
        for task in std::fs::read_dir(format!("/proc/{p}/task")).into_iter().flatten().flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            todo.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
    }
    total
}

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &str,
    args: serde_json::Value,
) -> serde_json::Value {
    let r = client
        .call_tool(
            CallToolRequestParams::new(name.to_owned())
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{name}: {r:?}");
    r.structured_content.unwrap_or_default()
}

async fn drive(port: u16) -> u64 {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"))
            .auth_header(TOKEN.to_owned());
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < LOAD {
        if calls % 10 == 9 {
            let r = call(
                &client,
                "exec_command",
                json!({"workspace_id": "work", "command": ["true"], "wait_ms": 5000}),
            )
            .await;
            assert_eq!(r["state"], "exited", "{r}");
        } else {
            call(&client, "read", json!({"workspace_id": "work", "path": "a.txt"})).await;
        }
        calls += 1;
    }
    client.cancel().await.unwrap();
    calls
}

fn ready(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::{Read as _, Write as _};
            // A port forwarder may accept before the server listens, and then say nothing.
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let _ = s
                .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            if text.starts_with("HTTP/1.1 200") {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("pod on port {port} not ready");
}

#[tokio::main]
async fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("containers.conf");
    let (nofile, nproc) = (limit("n"), limit("u"));
    std::fs::write(
        &conf,
        format!(
            "[containers]\ndefault_ulimits = [\"nofile={nofile}:{nofile}\", \"nproc={nproc}:{nproc}\"]\n\
             [engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n"
        ),
    )
    .unwrap();
    // The image of the binaries this bench was built with (`--debug` takes them from
    // CODESPACE_IMAGE_BINARIES as they are): `scripts/image` alone would run a release
    // build of its own, with other features, from inside this one.
    let binaries = Path::new(env!("CARGO_BIN_EXE_codespace")).parent().unwrap();
    println!("pods: building the image from {}", binaries.display());
    let built = Command::new(repo.join("scripts/image"))
        .arg("--debug")
        .env("CONTAINERS_CONF", &conf)
        .env("CODESPACE_IMAGE_BINARIES", binaries)
        .status()
        .unwrap();
    assert!(built.success(), "scripts/image failed");
    let mut pods = Vec::new();
    for i in 0..PODS {
        let ws = dir.path().join(format!("pod{i}"));
        std::fs::create_dir_all(ws.join("work")).unwrap();
        // The state directory is a host directory the container user owns (podman 4.3's
        // tmpfs takes no uid option).
        std::fs::create_dir_all(ws.join("state")).unwrap();
        std::fs::write(ws.join("work/a.txt"), "x".repeat(4096)).unwrap();
        std::fs::write(ws.join("registry.json"), r#"{"workspaces":{"work":{"root":"/work","profile":"workspace-write","sandbox":"external"}}}"#).unwrap();
        Command::new("chown").args(["-R", "10001:10001"]).arg(&ws).status().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let name = format!("codespace-bench-{i}");
        let _ = Command::new("podman")
            .env("CONTAINERS_CONF", &conf)
            .args(["pod", "rm", "-f", &name])
            .output();
        podman(
            &conf,
            &[
                "run",
                "-d",
                "--pod",
                &format!("new:{name}"),
                "-p",
                &format!("127.0.0.1:{port}:8787"),
                "-v",
                &format!("{}:/work", ws.join("work").display()),
                "-v",
                &format!("{}:/etc/codespace/registry.json:ro", ws.join("registry.json").display()),
                "-v",
                &format!("{}:/var/lib/codespace", ws.join("state").display()),
                "localhost/codespace:dev",
                "serve",
                "--http",
                "--host",
                "0.0.0.0",
                "--port",
                "8787",
                "--config",
                "/etc/codespace/registry.json",
                "--token",
                TOKEN,
                "--allowed-host",
                &format!("127.0.0.1:{port}"),
            ],
        );
        pods.push((name, port));
    }
    for (_, port) in &pods {
        ready(*port);
    }
    let pids: Vec<u32> = pods
        .iter()
        .map(|(name, _)| {
            let ctr = podman(
                &conf,
                &["pod", "inspect", "--format", "{{range .Containers}}{{.Name}} {{end}}", name],
            );
            let ctr = ctr.split_whitespace().find(|c| !c.ends_with("-infra")).unwrap().to_owned();
            podman(&conf, &["inspect", "--format", "{{.State.Pid}}", &ctr]).parse().unwrap()
        })
        .collect();
    let idle: Vec<u64> = pids.iter().map(|p| rss_kib(*p)).collect();
    let started = Instant::now();
    let tasks: Vec<_> = pods.iter().map(|(_, port)| tokio::spawn(drive(*port))).collect();
    let mut counts = Vec::new();
    for t in tasks {
        counts.push(t.await.unwrap());
    }
    let wall = started.elapsed().as_secs_f64();
    let loaded: Vec<u64> = pids.iter().map(|p| rss_kib(*p)).collect();
    println!(
        "pods: {PODS} on one host, each its own workspace, driven concurrently for {LOAD:?} (read 4 KiB, every 10th call exec_command true to its exit)"
    );
    for (i, n) in counts.iter().enumerate() {
        println!(
            "  pod {i}: {:.0} calls/s, RSS {:.1} MiB idle, {:.1} MiB after load",
            *n as f64 / wall,
            idle[i] as f64 / 1024.0,
            loaded[i] as f64 / 1024.0
        );
    }
    let total: u64 = counts.iter().sum();
    let mean_rss = loaded.iter().sum::<u64>() as f64 / loaded.len() as f64 / 1024.0;
    println!(
        "  all: {:.0} calls/s; mean RSS per pod after load {mean_rss:.1} MiB",
        total as f64 / wall
    );
    for (name, _) in &pods {
        let _ = Command::new("podman")
            .env("CONTAINERS_CONF", &conf)
            .args(["pod", "rm", "-f", name])
            .output();
    }
}
