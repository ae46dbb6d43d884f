//! Shared helpers: supervisors wired to the example reaper, requests, deadline polling and
//! `/proc` scans.
#![expect(
    clippy::disallowed_methods,
    reason = "helpers find the example reaper, read PATH for the requests and scan /proc"
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use codespace_process::{ProcStatus, SpawnRequest, Spawned, Supervisor, SupervisorConfig};
use codespace_types::ProcessState;

/// A binary built from this crate's `examples/`.
pub(crate) fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/it-<hash> -> target/<profile>/examples/<name>
    let path = exe.parent().unwrap().parent().unwrap().join("examples").join(name);
    assert!(path.exists(), "{} not built (cargo test builds examples)", path.display());
    path
}

pub(crate) fn config() -> SupervisorConfig {
    SupervisorConfig::new(example("reaper"))
}

pub(crate) fn supervisor() -> Arc<Supervisor> {
    Supervisor::new(config())
}

pub(crate) fn base_env() -> Vec<(String, String)> {
    let path = std::env::var("PATH").unwrap_or_else(|_| codespace_process::DEFAULT_PATH.into());
    vec![("PATH".into(), path), ("HOME".into(), "/tmp".into()), ("LANG".into(), "C".into())]
}

pub(crate) fn req(argv: &[&str]) -> SpawnRequest {
    SpawnRequest {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: std::env::temp_dir(),
        cwd_dir: None,
        env: base_env(),
        tty: false,
        timeout: Duration::from_secs(60),
        // SIGKILL at once, as the tree tests expect; the grace has its own tests.
        kill_grace: Duration::ZERO,
        sandbox: None,
        external: None,
    }
}

pub(crate) fn tty_req(argv: &[&str]) -> SpawnRequest {
    let mut r = req(argv);
    r.tty = true;
    r.env.push(("TERM".into(), "xterm".into()));
    r
}

/// Generous bound for things that normally take milliseconds (2 loaded cores).
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// Waits for the process to be reported exited and returns its status.
pub(crate) async fn wait_exit(sup: &Supervisor, spawned: &Spawned) -> ProcStatus {
    let watch = spawned.exited.clone();
    tokio::time::timeout(PATIENCE, watch.wait())
        .await
        .unwrap_or_else(|_| panic!("{} did not exit within {PATIENCE:?}", spawned.id));
    let status = sup.status(&spawned.id).unwrap();
    assert_eq!(status.state, ProcessState::Exited);
    status
}

/// Every retained byte, once the output is complete.
pub(crate) async fn read_all(sup: &Supervisor, id: &str) -> Vec<u8> {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut cursor = 0;
    loop {
        let chunk = sup.read(id, cursor, 64 * 1024).unwrap();
        out.extend_from_slice(&chunk.chunk);
        cursor = chunk.cursor;
        if chunk.eof {
            return out;
        }
        assert!(start.elapsed() < PATIENCE, "no eof for {id}; so far {:?}", lossy(&out));
        if chunk.chunk.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Spawns, waits for the exit, returns the status and the whole output.
pub(crate) async fn run(sup: &Supervisor, r: SpawnRequest) -> (ProcStatus, Vec<u8>) {
    let spawned = sup.spawn(r).await.unwrap();
    let status = wait_exit(sup, &spawned).await;
    let out = read_all(sup, &spawned.id).await;
    (status, out)
}

/// Polls the whole retained output until `pred` holds.
pub(crate) async fn wait_output(sup: &Supervisor, id: &str, pred: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let text = lossy(&sup.read(id, 0, usize::MAX).unwrap().chunk);
        if pred(&text) {
            return text;
        }
        assert!(start.elapsed() < PATIENCE, "output never matched; got {text:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A `sleep` duration no other process on the machine uses: `1000.<pid><n>`.
pub(crate) fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(100);
    format!("1000.{}{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Pids of `sleep <marker>` processes (argv exactly that), so neither the `sh -c '…'`
/// that mentions the marker nor the reaper shim whose arguments carry it count.
pub(crate) fn pids_with_arg(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let argv: Vec<&[u8]> = cmdline.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
        if argv.len() == 2 && argv[0].ends_with(b"sleep") && argv[1] == marker.as_bytes() {
            out.push(pid);
        }
    }
    out
}

/// Polls `cond` every 5 ms until it holds (`Some(time taken)`) or `limit` passes (`None`).
pub(crate) fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if cond() {
            return Some(start.elapsed());
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Async flavour of [`eventually`], for tests whose runtime must keep running meanwhile.
pub(crate) async fn eventually_async(
    limit: Duration,
    mut cond: impl FnMut() -> bool,
) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if cond() {
            return Some(start.elapsed());
        }
        if start.elapsed() > limit {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits until every marker names a running process.
pub(crate) async fn wait_started(markers: &[&str]) {
    let ok = eventually_async(PATIENCE, || markers.iter().all(|m| !pids_with_arg(m).is_empty()));
    assert!(ok.await.is_some(), "{markers:?} never all started");
}

/// Asserts that no process with any of the markers is left within `limit`, and returns how
/// long that took.
pub(crate) async fn assert_gone(markers: &[&str], limit: Duration) -> Duration {
    let gone =
        eventually_async(limit, || markers.iter().all(|m| pids_with_arg(m).is_empty())).await;
    let left: Vec<_> = markers.iter().map(|m| (m, pids_with_arg(m))).collect();
    gone.unwrap_or_else(|| panic!("still running after {limit:?}: {left:?}"))
}

/// Descriptor numbers listed by `ls /proc/self/fd` output.
pub(crate) fn fd_numbers(ls_output: &str) -> Vec<u32> {
    let mut fds: Vec<u32> =
        ls_output.split_whitespace().filter_map(|w| w.trim().parse().ok()).collect();
    fds.sort_unstable();
    fds
}

/// This test process's session id as the kernel reports it in `/proc/self/stat`. It is 0
/// when the session leader lives outside our PID namespace (a container), which is why
/// this does not go through a non-zero `Pid` type.
pub(crate) fn my_sid() -> i32 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the parenthesised command name: state ppid pgrp session ...
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split_whitespace().nth(3).unwrap().parse().unwrap()
}
