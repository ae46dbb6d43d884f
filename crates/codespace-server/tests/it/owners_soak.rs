//! The soak of several servers on one ledger: four servers, each round a patch from every
//! one, a shared granted patch hold and command hold every one resumes at once, and a kill
//! -9 of any of them at a random moment (restarted at once, its start-up beside the live
//! ones, and now and then killed again while it starts); after each round the ledger is
//! compared with the disk. Seeded, so a failure replays.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::owners::{Shared, call, send_call};
use crate::support::RawStdio;

const SERVERS: usize = 4;
const ROUNDS: u32 = 120;
/// New files each server's patch adds per round.
const ADDS: usize = 6;

#[derive(Debug, Default)]
struct Tally {
    rounds: u32,
    kills: u32,
    patches_told: u32,
    resumes_run: u32,
    resumes_elsewhere: u32,
    commands_started: u32,
    commands_ambiguous: u32,
    settled_after_kill: u32,
    contradictions: Vec<String>,
    applied_twice: Vec<String>,
    live_touched: Vec<String>,
}

/// Servers whose pids a watchdog kills if the soak hangs, so it fails instead.
#[derive(Clone, Default)]
struct Watchdog(Arc<Mutex<Vec<u32>>>);

impl Watchdog {
    fn arm(&self, limit: Duration) {
        let pids = Arc::clone(&self.0);
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            for pid in pids.lock().unwrap().iter() {
                if let Some(pid) = rustix::process::Pid::from_raw(*pid as i32) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        });
    }

    fn start(&self, s: &Shared) -> RawStdio {
        let raw = s.server(None, &[]);
        self.0.lock().unwrap().push(raw.child.id());
        raw
    }
}

#[test]
fn four_servers_on_one_ledger_never_contradict_the_disk() {
    let s = Shared::new();
    let dog = Watchdog::default();
    dog.arm(Duration::from_secs(400));
    let mut servers: Vec<RawStdio> = (0..SERVERS).map(|_| dog.start(&s)).collect();
    let mut rng = StdRng::seed_from_u64(0x0b5e_55ed_4a11);
    let mut tally = Tally::default();
    // What a server that lived through its round answered for a patch it ran itself, and
    // for a resume (run by it or by another, whose outcome it replays): id and status.
    let mut ran: Vec<(String, String)> = Vec::new();
    let mut told: Vec<(String, String)> = Vec::new();
    let mut next = 1_000u64;
    let started = Instant::now();
    for round in 0..ROUNDS {
        next += 100;
        let hold = granted_hold(&mut servers[0], next, round);
        let command = granted_command(&mut servers[1], next + 5, round);
        for (i, server) in servers.iter_mut().enumerate() {
            let key = format!("r{round}-s{i}");
            let patch = json!({"workspace_id": "w", "patch": adds(round, i), "operation_key": key});
            send_call(server, next + 10 + i as u64, "apply_patch", patch);
            send_call(
                server,
                next + 20 + i as u64,
                "operation_resume",
                json!({"approval_id": hold}),
            );
            let resume = json!({"approval_id": command});
            send_call(server, next + 30 + i as u64, "operation_resume", resume);
        }
        let victim = rng.random_bool(0.8).then(|| rng.random_range(0..SERVERS));
        if let Some(v) = victim {
            std::thread::sleep(Duration::from_micros(rng.random_range(0..40_000)));
            let _ = servers[v].child.kill();
            servers[v].child.wait().unwrap();
            tally.kills += 1;
            // Now and then the new server is killed too, while it starts (in its recovery,
            // say): what it took over is then a dead server's again.
            if rng.random_bool(0.25) {
                let ledger = ["--operations-db".as_ref(), s.db.as_os_str()];
                let mut early = RawStdio::spawn(&s.env, &ledger);
                std::thread::sleep(Duration::from_micros(rng.random_range(0..30_000)));
                let _ = early.child.kill();
                early.child.wait().unwrap();
                tally.kills += 1;
            }
            // Started again at once, beside three live servers still at work: its recovery
            // settles only the dead one's work.
            servers[v] = dog.start(&s);
        }
        let mut pids = Vec::new();
        for (i, server) in servers.iter_mut().enumerate() {
            if Some(i) == victim {
                continue;
            }
            let ids = [next + 10 + i as u64, next + 20 + i as u64, next + 30 + i as u64];
            let got = answers(server, &ids);
            let patched = got[&ids[0]].as_ref().unwrap_or_else(|e| panic!("round {round}: {e}"));
            assert_eq!(patched["status"], "applied", "round {round}: {patched}");
            ran.push(told_of(patched));
            tally.patches_told += 1;
            match &got[&ids[1]] {
                Ok(v) => {
                    told.push(told_of(&v["apply_patch"]));
                    tally.resumes_run += 1;
                }
                Err(body) => {
                    assert_eq!(body["code"], "APPROVAL_CONFLICT", "round {round}: {body}");
                    tally.resumes_elsewhere += 1;
                }
            }
            started_once(&got[&ids[2]], victim.is_some(), &mut pids, round);
        }
        // Whoever won the command's claim and lived answered its process_id.
        assert!(victim.is_some() || !pids.is_empty(), "round {round}: the process_id was lost");
        next += 40;
        let last = call(&mut servers[0], next, "operation_resume", json!({"approval_id": command}));
        started_once(&last, victim.is_some(), &mut pids, round);
        let surely = victim.is_none() && !pids.is_empty();
        let runs = command_runs(&s, round, surely);
        assert!(runs <= 1, "round {round}: the command ran {runs} times");
        assert!(!surely || runs == 1, "round {round}: a started command never ran");
        if pids.is_empty() {
            tally.commands_ambiguous += 1;
        } else {
            tally.commands_started += 1;
        }
        // The hold ends applied once, whoever runs or settles it.
        next += 50;
        let done = call(&mut servers[0], next, "operation_resume", json!({"approval_id": hold}));
        let done = done.unwrap_or_else(|e| panic!("round {round}: the hold did not settle: {e}"));
        assert_eq!(done["apply_patch"]["status"], "applied", "round {round}: {done}");
        // Every applied patch's record is written before a status answers.
        for server in &mut servers {
            next += 1;
            let _ = call(server, next, "operation_status", json!({"operation_id": "op-none"}));
        }
        tally.settled_after_kill = compare(&s, &ran, &told, &mut tally, round);
        assert!(tally.contradictions.is_empty(), "ledger against disk: {:?}", tally.contradictions);
        assert!(tally.applied_twice.is_empty(), "applied twice: {:?}", tally.applied_twice);
        assert!(tally.live_touched.is_empty(), "live work touched: {:?}", tally.live_touched);
        tally.rounds += 1;
    }
    eprintln!(
        "owners soak: {} rounds in {:.0?}, {} kills, {} patches answered, {} patch hold resumes run and {} refused as elsewhere, {} command holds started once and {} left ambiguous by a kill (never started twice), {} operations settled after their server was killed; {} contradictions, {} applied twice, {} live operations touched",
        tally.rounds,
        started.elapsed(),
        tally.kills,
        tally.patches_told,
        tally.resumes_run,
        tally.resumes_elsewhere,
        tally.commands_started,
        tally.commands_ambiguous,
        tally.settled_after_kill,
        tally.contradictions.len(),
        tally.applied_twice.len(),
        tally.live_touched.len(),
    );
    for server in servers {
        let _ = server.finish();
    }
}

/// `ADDS` new files for server `i` in `round`.
fn adds(round: u32, i: usize) -> String {
    let mut patch = String::from("*** Begin Patch\n");
    for k in 0..ADDS {
        patch
            .push_str(&format!("*** Add File: r{round}-s{i}-{k}.txt\n+round {round} server {i}\n"));
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// A patch hold in `c` adding `h<round>.txt`, created and granted through `server`.
fn granted_hold(server: &mut RawStdio, id: u64, round: u32) -> String {
    let patch =
        format!("*** Begin Patch\n*** Add File: h{round}.txt\n+hold {round}\n*** End Patch\n");
    let held = call(server, id, "apply_patch", json!({"workspace_id": "c", "patch": patch}));
    let held = held.unwrap_err();
    assert_eq!(held["code"], "APPROVAL_REQUIRED", "{held}");
    let hold = held["approval_id"].as_str().unwrap().to_owned();
    let grant = json!({"approval_id": hold, "decision": "grant"});
    call(server, id + 1, "approval_resolve", grant).unwrap();
    hold
}

/// A command hold in `x` appending to `x<round>.txt`, created and granted through `server`.
fn granted_command(server: &mut RawStdio, id: u64, round: u32) -> String {
    let command = json!(["sh", "-c", format!("echo ran >> x{round}.txt")]);
    let held = call(server, id, "exec_command", json!({"workspace_id": "x", "command": command}));
    let held = held.unwrap_err();
    assert_eq!(held["code"], "APPROVAL_REQUIRED", "{held}");
    let hold = held["approval_id"].as_str().unwrap().to_owned();
    let grant = json!({"approval_id": hold, "decision": "grant"});
    call(server, id + 1, "approval_resolve", grant).unwrap();
    hold
}

/// One answer to a command hold's resume: its process (every one the same), the hold being
/// resumed elsewhere, or (only in a round with a kill) ambiguous.
fn started_once(got: &Result<Value, Value>, killed: bool, pids: &mut Vec<String>, round: u32) {
    match got {
        Ok(v) => {
            let pid = v["exec_command"]["process_id"].as_str().unwrap_or_else(|| panic!("{v}"));
            assert!(pids.iter().all(|p| p == pid), "round {round}: {pid} and {pids:?}");
            pids.push(pid.to_owned());
        }
        Err(body) if body["code"] == "APPROVAL_CONFLICT" => {}
        Err(body) if killed && body["code"] == "APPROVAL_AMBIGUOUS" => {}
        Err(body) => panic!("round {round}: {body}"),
    }
}

/// How many times round `round`'s command ran; when `surely` it ran, waits for it first.
fn command_runs(s: &Shared, round: u32, surely: bool) -> usize {
    let path = s.root("x").join(format!("x{round}.txt"));
    let count = || std::fs::read_to_string(&path).unwrap_or_default().lines().count();
    let deadline = Instant::now() + Duration::from_secs(10);
    while surely && count() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    // A second start would land soon after the first.
    std::thread::sleep(Duration::from_millis(20));
    count()
}

fn told_of(result: &Value) -> (String, String) {
    let id = result["operation_id"].as_str().unwrap_or_else(|| panic!("no id: {result}"));
    (id.to_owned(), result["status"].as_str().unwrap().to_owned())
}

/// The answers to every call in `ids`, whatever their order.
fn answers(raw: &mut RawStdio, ids: &[u64]) -> HashMap<u64, Result<Value, Value>> {
    let mut got = HashMap::new();
    while got.len() < ids.len() {
        let reply = raw.recv().expect("a server that was not killed answers");
        let Some(id) = reply["id"].as_u64().filter(|id| ids.contains(id)) else { continue };
        let result = &reply["result"];
        let answer = if result["isError"] == true {
            let text = result["content"][0]["text"].as_str().unwrap();
            Err(serde_json::from_str(text).unwrap())
        } else {
            Ok(result["structuredContent"].clone())
        };
        got.insert(id, answer);
    }
    got
}

/// One operation as the ledger file has it.
struct Row {
    status: String,
    recovered: bool,
    plan: Vec<(String, String, String)>,
}

/// Compares the ledger with the disk and with what live servers answered (`ran`: their own
/// patches, which no other server may have settled; `told`: resumes); returns how many
/// operations a recovery settled so far.
fn compare(
    s: &Shared,
    ran: &[(String, String)],
    told: &[(String, String)],
    tally: &mut Tally,
    round: u32,
) -> u32 {
    let rows = ledger(&s.db);
    let mut by_path: BTreeMap<(String, String), Vec<(&str, &str)>> = BTreeMap::new();
    for (id, row) in &rows {
        if row.status == "pending" || row.status == "applying" || row.status == "unknown" {
            tally.contradictions.push(format!("round {round}: {id} left {}", row.status));
        }
        for (ws, path, _) in &row.plan {
            by_path.entry((ws.clone(), path.clone())).or_default().push((id, &row.status));
        }
    }
    for ((ws, path), ops) in &by_path {
        let applied: Vec<&(&str, &str)> = ops.iter().filter(|(_, st)| *st == "applied").collect();
        if applied.len() > 1 {
            tally.applied_twice.push(format!("round {round}: {ws}/{path} by {applied:?}"));
        }
        let on_disk = disk_version(&s.root(ws).join(path));
        let expected = match applied.first() {
            Some((id, _)) => {
                rows[*id].plan.iter().find(|(w, p, _)| w == ws && p == path).unwrap().2.clone()
            }
            None => "absent".to_owned(),
        };
        if on_disk != expected {
            tally.contradictions.push(format!(
                "round {round}: {ws}/{path} is {on_disk}, the ledger says {expected} ({ops:?})"
            ));
        }
    }
    // Every soak file on disk is named by an applied operation.
    for ws in ["w", "c"] {
        for entry in std::fs::read_dir(s.root(ws)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let soak = name.starts_with('r') || name.starts_with('h');
            if soak && !by_path.contains_key(&(ws.to_owned(), name.clone())) {
                tally.contradictions.push(format!("round {round}: {ws}/{name} has no operation"));
            }
        }
    }
    for (id, status) in ran {
        match rows.get(id) {
            Some(row) if row.status == *status && !row.recovered => {}
            Some(row) => tally.live_touched.push(format!(
                "round {round}: {id} answered {status} by a live server, the ledger says {} (recovered: {})",
                row.status, row.recovered
            )),
            None => tally.live_touched.push(format!("round {round}: {id} answered {status}, no row")),
        }
    }
    for (id, status) in told {
        if rows.get(id).is_none_or(|row| row.status != *status) {
            tally.contradictions.push(format!("round {round}: resume of {id} answered {status}"));
        }
    }
    rows.values().filter(|r| r.recovered).count() as u32
}

fn ledger(db: &Path) -> BTreeMap<String, Row> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut rows = BTreeMap::new();
    let mut ops = conn
        .prepare(
            "SELECT operation_id, status, EXISTS (SELECT 1 FROM operation_events e WHERE \
             e.operation_id = o.operation_id AND e.name = 'recovered') FROM operations o",
        )
        .unwrap();
    let found = ops.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?))).unwrap();
    for op in found {
        let (id, status, recovered) = op.unwrap();
        rows.insert(id, Row { status, recovered, plan: vec![] });
    }
    let mut files = conn
        .prepare(
            "SELECT f.operation_id, o.workspace_id, f.path, f.after_version FROM operation_files f \
             JOIN operations o USING (operation_id)",
        )
        .unwrap();
    let found = files
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap();
    for file in found {
        let (id, ws, path, after) = file.unwrap();
        rows.get_mut(&id).unwrap().plan.push((ws, path, after));
    }
    rows
}

fn disk_version(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => format!("sha256:{}", hex::encode(Sha256::digest(&bytes))),
        Err(_) => "absent".to_owned(),
    }
}
