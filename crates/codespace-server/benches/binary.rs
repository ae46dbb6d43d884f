//! Binary `read` benchmark: 1 MiB windows of a 2 GiB file of NULs (answered as base64)
//! through the official Python MCP SDK client, against `pread` of the same windows measured
//! in the same run (target: later windows within 15x), and the first and second windows
//! apart (the first hashes the whole file; the second must not). Beside it, what the client
//! alone costs: the same SDK receiving replies of the same size from a trivial server (the
//! transfer floor), and the server alone: the same windows through a bare line client.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark panics on a setup failure and prints its figures to stdout"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their files on the host filesystem and start the server binary"
)]

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::median;
use serde_json::{Value, json};

const STRIDE: u64 = 128 << 20;
const WINDOWS: u64 = 16;

const ROW: &str = "`read` 1 MiB window of a 2 GiB binary file (NULs), Python SDK";

fn ms(v: &Value) -> Vec<Duration> {
    let list = v.as_array().unwrap();
    list.iter().map(|x| Duration::from_secs_f64(x.as_f64().unwrap() / 1000.0)).collect()
}

fn main() {
    let Some(python) = common::python() else {
        common::missing(ROW, "no Python with the `mcp` package (set CODESPACE_PYTHON)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big");
    std::fs::create_dir(&big).unwrap();
    std::fs::File::create(big.join("2g.bin")).unwrap().set_len(2 << 30).unwrap();
    let config = tmp.path().join("reg.json");
    let registry = json!({"workspaces": {"big": {"root": big.display().to_string()}}});
    std::fs::write(&config, registry.to_string()).unwrap();
    // A version is kept only for a file whose ctime is safely in the past.
    std::thread::sleep(Duration::from_millis(2300));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/read_window.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(common::binary())
        .arg(&config)
        .args(["big", "2g.bin", &STRIDE.to_string(), &WINDOWS.to_string()])
        .env("XDG_STATE_HOME", tmp.path().join("state"))
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    let windows = ms(&figures["windows_ms"]);
    let ping = median(ms(&figures["ping_ms"]));
    let same_size = median(ms(&figures["same_size_ms"]));

    let mut bare = common::BareClient::start(&config, &tmp.path().join("state"));
    let mut served = Vec::new();
    for round in 0..3 {
        for i in 0..WINDOWS {
            let msg = json!({"jsonrpc": "2.0", "id": round * WINDOWS + i + 1, "method": "tools/call",
                "params": {"name": "read", "arguments": {"workspace_id": "big", "path": "2g.bin",
                "offset": i * STRIDE}}});
            let t = Instant::now();
            let line = bare.request(&msg.to_string());
            served.push(t.elapsed());
            assert!(line.contains("\"byte_count\":1048576"), "{}", &line[..line.len().min(400)]);
        }
    }
    let served = median(served);
    drop(bare);

    let file = std::fs::File::open(big.join("2g.bin")).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut floor = Vec::new();
    for _ in 0..3 {
        for i in 0..WINDOWS {
            let t = Instant::now();
            std::os::unix::fs::FileExt::read_exact_at(&file, &mut buf, i * STRIDE).unwrap();
            floor.push(t.elapsed());
        }
    }
    let floor = median(floor);
    let later = median(windows[2..].to_vec());
    let ratio = later.as_secs_f64() / floor.as_secs_f64();
    let beyond = later.as_secs_f64() / same_size.as_secs_f64();
    println!(
        "read 1 MiB window of a 2 GiB NUL file (encoding {}, reply {} B), Python SDK client: first {:?} (hashes the file), second {:?} ({:.1}x pread: must not hash), later {later:?} vs pread {floor:?}: {ratio:.1}x (target <= 15x); the same SDK receiving a reply of the same size from a trivial server {same_size:?} ({:.1}x pread; the window is {beyond:.2}x it); the same windows through a bare line client {served:?}; SDK ping {ping:?}",
        figures["encoding"],
        figures["reply_bytes"],
        windows[0],
        windows[1],
        windows[1].as_secs_f64() / floor.as_secs_f64(),
        same_size.as_secs_f64() / floor.as_secs_f64(),
    );
    common::row(
        ROW,
        &format!(
            "{} per window (encoding {}; bare line client {}); the second window {}",
            common::ms(later),
            figures["encoding"],
            common::ms(served),
            common::ms(windows[1])
        ),
        &format!(
            "`pread` {}; the same SDK, a same-size reply from a trivial server {}",
            common::ms(floor),
            common::ms(same_size)
        ),
        &format!("{ratio:.1}x pread, {beyond:.2}x the same-size reply"),
        &common::verdict("<= 15x pread", ratio <= 15.0),
    );
}
