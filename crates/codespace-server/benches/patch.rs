//! Patch benchmark, in one run: (1) plan and apply a 50-chunk V4A patch to a 20,000-line file
//! with the engine in-process vs GNU `patch` applying the equivalent unified diff; (2) the
//! `apply_patch` round trip over stdio for a one-line change (durable file ledger), by the
//! rmcp client and by a minimal line client, vs the
//! durable floor (two WAL commits, a file and a directory fsync, in-process) and the
//! reference filesystem server's `edit_file` (installed, pinned, by the bench itself). Each
//! figure is printed against its floor measured in the same run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark panics on a setup failure and prints its figures to stdout"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "benchmarks build their trees on the host filesystem and start the server binary"
)]

mod common;

use common::median;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use codespace_fs::Root;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientRequest, PingRequest};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

fn line(i: usize) -> String {
    format!("    let value_{i} = compute({i}, \"line {i}\");")
}

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let original: String = (0..20_000).map(|i| line(i) + "\n").collect();
    let changed_at: Vec<usize> = (0..50).map(|c| 200 + c * 395).collect();
    let mut v4a = String::from("*** Begin Patch\n*** Update File: big.rs\n");
    let mut diff = String::from("--- big.rs\n+++ big.rs\n");
    for &at in &changed_at {
        v4a.push_str("@@\n");
        for i in at - 3..at {
            v4a.push_str(&format!(" {}\n", line(i)));
        }
        v4a.push_str(&format!("-{}\n+{}  // changed\n", line(at), line(at)));
        for i in at + 1..at + 4 {
            v4a.push_str(&format!(" {}\n", line(i)));
        }
        diff.push_str(&format!(
            "@@ -{} +{} @@\n",
            format_args!("{},7", at - 2),
            format_args!("{},7", at - 2)
        ));
        for i in at - 3..at {
            diff.push_str(&format!(" {}\n", line(i)));
        }
        diff.push_str(&format!("-{}\n+{}  // changed\n", line(at), line(at)));
        for i in at + 1..at + 4 {
            diff.push_str(&format!(" {}\n", line(i)));
        }
    }
    v4a.push_str("*** End Patch\n");
    let diff_path = tmp.path().join("change.diff");
    std::fs::write(&diff_path, &diff).unwrap();

    let rounds = 30;
    let (mut plan_only, mut plain, mut engine, mut gnu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let engine_dir = tmp.path().join("engine");
    let gnu_dir = tmp.path().join("gnu");
    std::fs::create_dir_all(&engine_dir).unwrap();
    std::fs::create_dir_all(&gnu_dir).unwrap();
    let root = Root::open(&engine_dir).unwrap();
    let mut expected = None;
    for _ in 0..rounds {
        std::fs::write(engine_dir.join("big.rs"), &original).unwrap();
        std::fs::write(gnu_dir.join("big.rs"), &original).unwrap();

        let t = Instant::now();
        let parsed = codespace_patch::parse(&v4a).unwrap();
        let planned = codespace_patch::plan(&parsed, |_| {
            Ok::<_, std::convert::Infallible>(codespace_patch::Entry::File(
                original.as_bytes().to_vec(),
            ))
        })
        .unwrap();
        plan_only.push(t.elapsed());
        assert_eq!(planned.changes.len(), 1);

        // Same work as GNU patch does: read, plan, write a new file, rename; no fsync.
        let t = Instant::now();
        let text = std::fs::read(engine_dir.join("big.rs")).unwrap();
        let parsed = codespace_patch::parse(&v4a).unwrap();
        let planned = codespace_patch::plan(&parsed, |_| {
            Ok::<_, std::convert::Infallible>(codespace_patch::Entry::File(text.clone()))
        })
        .unwrap();
        let tmp_file = engine_dir.join(".big.rs.tmp");
        std::fs::write(&tmp_file, planned.changes[0].after.as_ref().unwrap()).unwrap();
        std::fs::rename(&tmp_file, engine_dir.join("big.rs")).unwrap();
        plain.push(t.elapsed());
        std::fs::write(engine_dir.join("big.rs"), &original).unwrap();

        let t = Instant::now();
        let writes = codespace_files::prepare(&root, &v4a).unwrap();
        assert_eq!(codespace_files::apply(&root, &writes), codespace_files::ApplyOutcome::Applied);
        engine.push(t.elapsed());

        let t = Instant::now();
        let st = Command::new("patch")
            .args(["--quiet", "--batch", "-p0", "-i"])
            .arg(&diff_path)
            .current_dir(&gnu_dir)
            .stdout(Stdio::null())
            .status()
            .expect("GNU patch (apt-get install patch)");
        gnu.push(t.elapsed());
        assert!(st.success());
        let ours = std::fs::read(engine_dir.join("big.rs")).unwrap();
        let theirs = std::fs::read(gnu_dir.join("big.rs")).unwrap();
        assert_eq!(ours, theirs, "both tools produce the same file");
        expected.get_or_insert(ours);
    }
    let (plan_only, plain, engine, gnu) =
        (median(plan_only), median(plain), median(engine), median(gnu));
    println!(
        "50-chunk patch, 20,000-line file: engine plan in memory {plan_only:?} ({:.2}x of GNU patch)",
        plan_only.as_secs_f64() / gnu.as_secs_f64()
    );
    println!(
        "50-chunk patch, 20,000-line file: engine read + plan + write + rename (what GNU patch does) {plain:?} vs GNU patch {gnu:?}: {:.2}x (target < 1x)",
        plain.as_secs_f64() / gnu.as_secs_f64()
    );
    println!(
        "50-chunk patch, 20,000-line file: engine plan + durable apply (temp, fsync, rename, dir fsync, verify) {engine:?} vs GNU patch {gnu:?} (which never fsyncs): {:.2}x",
        engine.as_secs_f64() / gnu.as_secs_f64()
    );

    round_trip(tmp.path()).await;
}

/// The pinned peer: the reference MCP filesystem server's `edit_file` (no fsync, no ledger).
const FILESYSTEM_PEER: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";

/// The one-line change from `value {i}` to `value {i + 1}`.
fn one_line_patch(i: usize) -> String {
    format!(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-value {i}\n+value {}\n*** End Patch\n",
        i + 1
    )
}

/// Medians of `ping` and of a one-line `apply_patch` (rounds `0..200`), each patch after a
/// ping, from the rmcp client.
async fn rmcp_rounds(config: &Path, dir: &Path) -> (Duration, Duration) {
    let db = dir.join("state/ledger.sqlite3");
    let ledger = [std::ffi::OsStr::new("--operations-db"), db.as_os_str()];
    let client = ().serve(common::server(config, &dir.join("state"), &ledger)).await.unwrap();
    let (mut ping, mut apply) = (Vec::new(), Vec::new());
    for i in 0..200 {
        let t = Instant::now();
        client.send_request(ClientRequest::PingRequest(PingRequest::default())).await.unwrap();
        ping.push(t.elapsed());
        let Value::Object(args) = json!({"workspace_id": "w", "patch": one_line_patch(i), "operation_key": format!("k{i}")})
        else {
            unreachable!()
        };
        let t = Instant::now();
        let r = client
            .call_tool(CallToolRequestParams::new("apply_patch").with_arguments(args))
            .await
            .unwrap();
        apply.push(t.elapsed());
        assert_eq!(r.structured_content.unwrap()["status"], "applied");
    }
    client.cancel().await.unwrap();
    (median(ping), median(apply))
}

/// [`rmcp_rounds`] (rounds `200..400`) through a minimal line client on its own server and
/// ledger, to separate the server's cost from the rmcp client's.
fn bare_rounds(config: &Path, dir: &Path) -> (Duration, Duration) {
    let db = dir.join("state-bare/ledger.sqlite3");
    let ledger = [std::ffi::OsStr::new("--operations-db"), db.as_os_str()];
    let mut bare = common::BareClient::launch(config, &dir.join("state-bare"), &ledger, true);
    let (mut ping, mut apply) = (Vec::new(), Vec::new());
    for i in 200..400 {
        ping.push(bare.ping(1));
        let args = json!({"workspace_id": "w", "patch": one_line_patch(i), "operation_key": format!("k{i}")});
        let t = Instant::now();
        let r = bare.call("apply_patch", args);
        apply.push(t.elapsed());
        assert_eq!(r["status"], "applied");
    }
    (median(ping), median(apply))
}

/// One-line `apply_patch` over stdio (durable file ledger) against the durable floor and the
/// filesystem peer's `edit_file`, all in this run.
async fn round_trip(dir: &Path) {
    let floor = durable_floor(dir);
    let ws = dir.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "value 0\n").unwrap();
    let config = dir.join("reg.json");
    std::fs::write(&config, json!({"workspaces": {"w": {"root": ws.display().to_string(), "profile": "workspace-write"}}}).to_string()).unwrap();
    let (ping, apply) = rmcp_rounds(&config, dir).await;
    let (bare_ping, bare_apply) = bare_rounds(&config, dir);
    println!(
        "durable floor in-process (2 WAL commits, synchronous=FULL; temp file, fsync, rename, directory fsync): {floor:?}"
    );
    println!(
        "apply_patch one-line change over stdio (file ledger, synchronous=FULL): {apply:?} = {:.2}x the durable floor (target <= 1.3x); ping {ping:?}",
        apply.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "the same through a minimal line client: {bare_apply:?} = {:.2}x the durable floor (target <= 1.3x); ping {bare_ping:?}",
        bare_apply.as_secs_f64() / floor.as_secs_f64()
    );
    // The floor is in-process; a call over stdio also makes one round trip.
    println!(
        "against the durable floor plus the client's ping (one round trip): rmcp client {:.2}x, minimal line client {:.2}x",
        apply.as_secs_f64() / (floor + ping).as_secs_f64(),
        bare_apply.as_secs_f64() / (floor + bare_ping).as_secs_f64()
    );
    let ratio = apply.as_secs_f64() / (floor + ping).as_secs_f64();
    common::row(
        "one-line durable edit (rmcp SDK client)",
        &common::ms(apply),
        &format!(
            "durable floor {} (its fsyncs; swings with the disk) + ping {}",
            common::ms(floor),
            common::ms(ping)
        ),
        &format!("{ratio:.2}x"),
        &common::verdict("<= 1.3x", ratio <= 1.3),
    );
    match filesystem_edit(dir).await {
        Ok(peer) => println!(
            "{FILESYSTEM_PEER} edit_file, same change over stdio (no fsync, no ledger): {peer:?}; apply_patch / edit_file = {:.2}x (target < 1x)",
            apply.as_secs_f64() / peer.as_secs_f64()
        ),
        Err(why) => println!("{FILESYSTEM_PEER} edit_file: not measured ({why})"),
    }
}

/// What a durable one-line patch cannot avoid, measured in-process: two WAL commits with
/// synchronous=FULL, and a temp file written, fsynced, renamed, its directory fsynced.
fn durable_floor(dir: &Path) -> Duration {
    let floor_dir = dir.join("floor");
    std::fs::create_dir_all(&floor_dir).unwrap();
    let mut conn = rusqlite::Connection::open(floor_dir.join("floor.sqlite3")).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "FULL").unwrap();
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)", []).unwrap();
    let dir_handle = std::fs::File::open(&floor_dir).unwrap();
    let mut times = Vec::new();
    for i in 0..200 {
        let t = Instant::now();
        let tx = conn.transaction().unwrap();
        tx.execute("INSERT INTO t (v) VALUES (?1)", [format!("plan {i}")]).unwrap();
        tx.commit().unwrap();
        let temp = floor_dir.join(".a.txt.tmp");
        let mut f = std::fs::File::create(&temp).unwrap();
        f.write_all(format!("value {i}\n").as_bytes()).unwrap();
        f.sync_all().unwrap();
        std::fs::rename(&temp, floor_dir.join("a.txt")).unwrap();
        dir_handle.sync_all().unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute("INSERT INTO t (v) VALUES (?1)", [format!("done {i}")]).unwrap();
        tx.commit().unwrap();
        times.push(t.elapsed());
    }
    median(times)
}

/// The filesystem peer's `edit_file` for the same one-line change, installed (pinned) into
/// `target/bench-tools` on first use.
async fn filesystem_edit(dir: &Path) -> Result<Duration, String> {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-tools/filesystem");
    let entry = tools.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !entry.exists() {
        std::fs::create_dir_all(&tools).map_err(|e| e.to_string())?;
        let st = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(&tools)
            .arg(FILESYSTEM_PEER)
            .status()
            .map_err(|e| format!("npm: {e}"))?;
        if !st.success() || !entry.exists() {
            return Err(format!("npm install {FILESYSTEM_PEER} failed"));
        }
    }
    let peer_dir = dir.join("peer");
    std::fs::create_dir_all(&peer_dir).unwrap();
    let file = peer_dir.join("a.txt");
    std::fs::write(&file, "value 0\n").unwrap();
    let transport = TokioChildProcess::new(tokio::process::Command::new("node").configure(|c| {
        c.arg(&entry).arg(&peer_dir).stderr(Stdio::null());
    }))
    .map_err(|e| format!("node: {e}"))?;
    let client = ().serve(transport).await.map_err(|e| e.to_string())?;
    let mut times = Vec::new();
    for i in 0..200 {
        let Value::Object(args) = json!({
            "path": file.display().to_string(),
            "edits": [{"oldText": format!("value {i}"), "newText": format!("value {}", i + 1)}],
        }) else {
            unreachable!()
        };
        let t = Instant::now();
        let r = client
            .call_tool(CallToolRequestParams::new("edit_file").with_arguments(args))
            .await
            .map_err(|e| e.to_string())?;
        times.push(t.elapsed());
        if r.is_error == Some(true) {
            return Err(format!("edit_file refused: {:?}", r.content));
        }
    }
    client.cancel().await.map_err(|e| e.to_string())?;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "value 200\n");
    Ok(median(times))
}
