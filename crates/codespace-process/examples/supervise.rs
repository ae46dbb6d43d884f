//! Test helper: a Supervisor in a process of its own, so the tests can SIGKILL it or give it
//! an environment and descriptors the test process itself must not have.
//!
//! - `supervise <reaper> hold <argv…>`: starts the command, prints `ready <id>`, then waits
//!   forever (the test SIGKILLs this process and checks that the command's tree dies).
//! - `supervise <reaper> leaky <argv…>`: first leaks a descriptor without close-on-exec,
//!   then runs the command with only `PATH` in its environment, waits for it, and writes
//!   its output to stdout.
//! - `supervise <reaper> flood <argv…>`: runs the command while sampling this process's
//!   resident memory, and prints the figures (the test process itself runs other tests
//!   concurrently, so its own RSS would not be attributable).

use std::io::Write as _;
use std::time::Duration;

use codespace_process::{SpawnRequest, Supervisor, SupervisorConfig};

#[expect(clippy::disallowed_methods, reason = "an example picks its exit code")]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [reaper, mode, argv @ ..] = args.as_slice() else {
        eprintln!("usage: supervise <reaper> hold|leaky|flood <argv…>");
        std::process::exit(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(run(reaper, mode, argv));
    std::process::exit(code)
}

#[expect(
    clippy::disallowed_methods,
    reason = "an example reads its settings from the environment and the command's input file"
)]
async fn run(reaper: &str, mode: &str, argv: &[String]) -> i32 {
    let sup = Supervisor::new(SupervisorConfig::new(reaper));
    let path = std::env::var("PATH").unwrap_or_else(|_| codespace_process::DEFAULT_PATH.into());
    let req = SpawnRequest {
        argv: argv.to_vec(),
        cwd: "/".into(),
        cwd_dir: None,
        env: vec![("PATH".into(), path)],
        tty: false,
        timeout: Duration::from_secs(3600),
        kill_grace: Duration::from_secs(2),
        sandbox: None,
        external: None,
    };
    let mut out = std::io::stdout();
    match mode {
        "hold" => {
            let spawned = match sup.spawn(req).await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("spawn: {e}");
                    return 1;
                }
            };
            let _ = writeln!(out, "ready {}", spawned.id);
            let _ = out.flush();
            std::future::pending::<()>().await;
            0
        }
        "leaky" => {
            // A descriptor a careless library might leave inheritable.
            let leaked = match std::fs::File::open("/dev/null") {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("open: {e}");
                    return 1;
                }
            };
            if let Err(e) = rustix::io::fcntl_setfd(&leaked, rustix::io::FdFlags::empty()) {
                eprintln!("fcntl: {e}");
                return 1;
            }
            let spawned = match sup.spawn(req).await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("spawn: {e}");
                    return 1;
                }
            };
            spawned.exited.wait().await;
            let Ok(chunk) = sup.read(&spawned.id, 0, usize::MAX) else { return 1 };
            let _ = out.write_all(&chunk.chunk);
            drop(leaked);
            0
        }
        "flood" => flood(&sup, req).await,
        _ => 2,
    }
}

/// `(VmRSS, RssAnon)` of this process in KiB.
#[expect(clippy::disallowed_methods, reason = "an example reads its own memory use from /proc")]
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("RssAnon:"))
}

/// Runs the command (an output flood) with this process's memory sampled every 2 ms, after
/// a warm-up run so the code involved is already paged in. Prints one line of `key=value`.
async fn flood(sup: &Supervisor, req: SpawnRequest) -> i32 {
    let mut warm = req.clone();
    warm.argv = vec!["head".into(), "-c".into(), "1000000".into(), "/dev/zero".into()];
    let Ok(w) = sup.spawn(warm).await else { return 1 };
    w.exited.wait().await;

    let (rss_before, anon_before) = rss_kib();
    let start = std::time::Instant::now();
    let Ok(spawned) = sup.spawn(req).await else { return 1 };
    let (mut rss_peak, mut anon_peak) = (rss_before, anon_before);
    while !spawned.exited.has_exited() {
        let (rss, anon) = rss_kib();
        (rss_peak, anon_peak) = (rss_peak.max(rss), anon_peak.max(anon));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let elapsed = start.elapsed();
    let (rss, anon) = rss_kib();
    (rss_peak, anon_peak) = (rss_peak.max(rss), anon_peak.max(anon));
    let Ok(status) = sup.status(&spawned.id) else { return 1 };
    let _ = writeln!(
        std::io::stdout(),
        "rss_before={rss_before} rss_peak={rss_peak} anon_before={anon_before} \
         anon_peak={anon_peak} output_total={} retained_from={} exit_code={} elapsed_ms={}",
        status.output_total,
        status.retained_from,
        status.exit_code.unwrap_or(-1),
        elapsed.as_millis()
    );
    0
}
