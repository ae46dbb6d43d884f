//! Rough latency figures: `true` through the supervisor (spawn, then wait for the exit
//! watch), unsandboxed and sandboxed, against a bare tokio spawn+wait of `true`, and
//! `seq 1 200000` drained through `read` against a bare tokio capture. Medians of N runs.
//!
//! `cargo run -p codespace-process --example latency [--release] -- <path/to/examples/reaper>`

use std::io::Write as _;
use std::time::{Duration, Instant};

use codespace_process::{SandboxPolicy, SpawnRequest, Supervisor, SupervisorConfig};
use codespace_types::NetworkPolicy;

const RUNS: usize = 200;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[expect(
    clippy::disallowed_methods,
    reason = "an example reads its settings from the environment, starts a baseline command and picks its exit code"
)]
fn main() {
    let Some(reaper) = std::env::args().nth(1) else {
        eprintln!("usage: latency <reaper>");
        std::process::exit(2);
    };
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread().enable_all().build() else {
        std::process::exit(1);
    };
    runtime.block_on(async move {
        let mut config = SupervisorConfig::new(reaper);
        config.max_completed = 4;
        // The same without the spawn helper (every shim exec'd), interleaved for comparison.
        let mut direct = config.clone();
        direct.spawn_helper = false;
        let sup = Supervisor::new(config);
        let direct = Supervisor::new(direct);
        let path = std::env::var("PATH").unwrap_or_else(|_| codespace_process::DEFAULT_PATH.into());
        let req = |argv: &[&str]| SpawnRequest {
            argv: argv.iter().map(|s| (*s).to_owned()).collect(),
            cwd: "/".into(),
            cwd_dir: None,
            env: vec![("PATH".into(), path.clone())],
            tty: false,
            timeout: Duration::from_secs(60),
            kill_grace: Duration::from_secs(2),
            sandbox: None,
            external: None,
        };
        let mut out = std::io::stdout();

        let mut bare = Vec::new();
        let mut supervised = Vec::new();
        let mut sandboxed = Vec::new();
        let (mut supervised_direct, mut sandboxed_direct) = (Vec::new(), Vec::new());
        let scratch = std::env::temp_dir();
        for _ in 0..RUNS {
            let t = Instant::now();
            let Ok(mut child) = tokio::process::Command::new("true").spawn() else { return };
            let _ = child.wait().await;
            bare.push(t.elapsed());

            for (s, times) in [(&sup, &mut supervised), (&direct, &mut supervised_direct)] {
                let t = Instant::now();
                let Ok(spawned) = s.spawn(req(&["true"])).await else { return };
                spawned.exited.wait().await;
                times.push(t.elapsed());
            }

            // The same under the sandbox (workspace-write on the temp dir, network restricted).
            let mut r = req(&["true"]);
            r.cwd = scratch.clone();
            r.sandbox = Some(SandboxPolicy {
                read_roots: vec![],
                writable_roots: vec![scratch.clone()],
                masked: vec![],
                network: NetworkPolicy::Restricted,
                max_pids: 1024,
                workdir: None,
            });
            for (s, times) in [(&sup, &mut sandboxed), (&direct, &mut sandboxed_direct)] {
                let t = Instant::now();
                let Ok(spawned) = s.spawn(r.clone()).await else { return };
                spawned.exited.wait().await;
                times.push(t.elapsed());
            }
        }
        let _ = writeln!(
            out,
            "true: bare spawn+wait {:?}, supervised spawn+exit {:?} (shim exec'd: {:?}), sandboxed {:?} (shim exec'd: {:?}) (median of {RUNS})",
            median(bare),
            median(supervised),
            median(supervised_direct),
            median(sandboxed),
            median(sandboxed_direct)
        );

        let mut bare = Vec::new();
        let mut supervised = Vec::new();
        let mut bytes = 0;
        let mut lost = 0;
        for _ in 0..20 {
            let t = Instant::now();
            let Ok(o) = tokio::process::Command::new("seq").args(["1", "200000"]).output().await
            else {
                return;
            };
            bytes = o.stdout.len();
            bare.push(t.elapsed());

            let t = Instant::now();
            let Ok(spawned) = sup.spawn(req(&["seq", "1", "200000"])).await else { return };
            let mut cursor = 0u64;
            loop {
                let Ok(chunk) = sup.read(&spawned.id, cursor, 1 << 20) else { return };
                cursor = chunk.cursor;
                lost += usize::from(chunk.output_lost);
                if chunk.eof {
                    break;
                }
                if chunk.chunk.is_empty() {
                    tokio::time::sleep(Duration::from_micros(200)).await;
                }
            }
            supervised.push(t.elapsed());
        }
        let _ = writeln!(
            out,
            "seq 1 200000 ({bytes} bytes): bare capture {:?}, supervised drain {:?} (median of 20; \
             reads that found output dropped: {lost})",
            median(bare),
            median(supervised)
        );
    });
}
