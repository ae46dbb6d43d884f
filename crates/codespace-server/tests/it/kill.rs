//! All-or-nothing across crashes, end to end (D1, D4): the real server SIGKILLed at random
//! points during multi-file patches, restarted, and checked after every recovery.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use crate::support::{Env, RawStdio};

fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// D1/D4: SIGKILL the server at random points during multi-file patches (eight updates and
/// a move); after each restart's recovery no operation is half-applied: every file of it
/// holds its old bytes or every file its new ones, an interrupted operation is
/// `failed_rolled_back` (or `applied` when every write had landed) with a `recovered`
/// event, the undo log is empty again, and the ledger passes `PRAGMA integrity_check`.
/// `CODESPACE_KILL_ROUNDS` raises the count (`scripts/soak-kill`).
#[test]
fn d1_kill_9_loop_leaves_no_operation_half_applied() {
    let rounds: u32 =
        std::env::var("CODESPACE_KILL_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write"}));
    let db = env.path().join("ledger.sqlite3");
    let mut tree = KillTree::new(root.clone());
    tree.write(0);
    // Seeded: the same kill points on every run.
    let mut rng = StdRng::seed_from_u64(0x9e37_79b9_7f4a_7c15);
    let mut outcomes = std::collections::BTreeMap::<String, u32>::new();
    let started = std::time::Instant::now();
    for round in 0..rounds {
        let mut raw = RawStdio::start(&env, &["--operations-db".as_ref(), db.as_os_str()]);
        if round > 0 {
            let outcome = check_round(&mut raw, &mut tree, &db, round);
            *outcomes.entry(outcome).or_insert(0) += 1;
        }
        // One patch moving every file to the next generation, killed at a random instant.
        raw.send(
            &json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"apply_patch","arguments":{"workspace_id":"w","patch": patch(&tree.next_patch()),"operation_key": format!("round-{round}")}}}),
        );
        std::thread::sleep(Duration::from_micros(rng.random_range(5_000..70_000)));
        let _ = raw.child.kill();
        raw.child.wait().unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok", "round {round}");
    }
    eprintln!(
        "kill loop: {rounds} rounds in {:.1?}, 0 half-applied, outcomes {outcomes:?}",
        started.elapsed()
    );
    let recovered: u32 =
        outcomes.iter().filter(|(k, _)| k.contains("(recovered")).map(|(_, n)| n).sum();
    assert!(rounds < 20 || recovered > 0, "some kills must land mid-operation: {outcomes:?}");
}

/// The kill loop's files: eight updated in place and one moved, all at one generation.
struct KillTree {
    root: std::path::PathBuf,
    generation: u32,
}

impl KillTree {
    const FILES: usize = 8;

    fn new(root: std::path::PathBuf) -> KillTree {
        std::fs::create_dir_all(root.join("moving")).unwrap();
        KillTree { root, generation: 0 }
    }

    fn content(generation: u32, i: usize) -> String {
        format!("file {i} generation {generation}\n{}\n", "x".repeat(20_000 + i * 1000))
    }

    fn moving(generation: u32) -> String {
        format!("moving/g{generation}.txt")
    }

    fn write(&mut self, generation: u32) {
        for i in 0..Self::FILES {
            std::fs::write(self.root.join(format!("f{i}.txt")), Self::content(generation, i))
                .unwrap();
        }
        std::fs::write(self.root.join(Self::moving(generation)), Self::content(generation, 99))
            .unwrap();
        self.generation = generation;
    }

    fn next_patch(&self) -> String {
        let g = self.generation;
        let first = |n, i| Self::content(n, i).lines().next().unwrap().to_owned();
        let mut body: String = (0..Self::FILES)
            .map(|i| {
                format!("*** Update File: f{i}.txt\n@@\n-{}\n+{}\n", first(g, i), first(g + 1, i))
            })
            .collect();
        body.push_str(&format!(
            "*** Update File: {}\n*** Move to: {}\n@@\n-{}\n+{}\n",
            Self::moving(g),
            Self::moving(g + 1),
            first(g, 99),
            first(g + 1, 99)
        ));
        body
    }

    /// Whether the tree holds generation `g` exactly, file by file and the move.
    fn holds(&self, g: u32) -> Vec<bool> {
        let read = |p: String| std::fs::read_to_string(self.root.join(p)).ok();
        let mut v: Vec<bool> = (0..Self::FILES)
            .map(|i| read(format!("f{i}.txt")) == Some(Self::content(g, i)))
            .collect();
        let other = if g == self.generation { g + 1 } else { self.generation };
        v.push(
            read(Self::moving(g)) == Some(Self::content(g, 99))
                && read(Self::moving(other)).is_none(),
        );
        v
    }
}

/// After a restart: the previous round's operation is classified, its files are all-old
/// or all-new accordingly, nothing is left in the undo log or as a temp file. Returns the
/// outcome's name.
fn check_round(
    raw: &mut RawStdio,
    tree: &mut KillTree,
    db: &std::path::Path,
    round: u32,
) -> String {
    raw.send(
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"operation_status","arguments":{"operation_key": format!("round-{}", round - 1), "workspace_id": "w"}}}),
    );
    let v = raw.recv().unwrap();
    let st = v["result"]["structuredContent"].clone();
    let status = if v["result"]["isError"] == true {
        let body: Value =
            serde_json::from_str(v["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(body["code"], "OPERATION_NOT_FOUND", "round {round}: {body}");
        "never-began".to_owned()
    } else {
        st["status"].as_str().unwrap().to_owned()
    };
    let g = tree.generation;
    let (old, new) = (tree.holds(g), tree.holds(g + 1));
    let all_old = old.iter().all(|b| *b);
    let all_new = new.iter().all(|b| *b);
    assert!(
        all_old || all_new,
        "round {round}: half-applied ({status}): old {old:?}, new {new:?}: {st}"
    );
    let recovered = st["recovered"] == true;
    let planned = st["events"].as_array().is_some_and(|e| e.iter().any(|e| e["name"] == "planned"));
    match status.as_str() {
        "applied" => assert!(all_new, "round {round}: applied but not all new: {st}"),
        "failed_rolled_back" => {
            assert!(all_old && recovered, "round {round}: {st}")
        }
        // Interrupted before its plan was recorded: nothing was written.
        "rejected" => assert!(all_old && recovered && !planned, "round {round}: {st}"),
        "never-began" => assert!(all_old, "round {round}"),
        other => panic!("round {round}: operation left {other}: {st}"),
    }
    if all_new {
        tree.generation += 1;
    }
    nothing_left_over(tree, db, round);
    // A rollback from a mix of old and new files says so in its recovered event.
    let mixed = st["events"].as_array().is_some_and(|e| {
        e.iter().any(|e| e["reason"].as_str().is_some_and(|r| r.contains("undo log")))
    });
    let how = match (recovered, mixed) {
        (true, true) => " (recovered from a mix)",
        (true, false) => " (recovered)",
        (false, _) => "",
    };
    format!("{status}{how}")
}

/// No undo log entry (every operation is terminal and none preserved anything) and no temp
/// file is left behind.
fn nothing_left_over(tree: &KillTree, db: &std::path::Path, round: u32) {
    let mut undo_dir = db.as_os_str().to_owned();
    undo_dir.push(".undo");
    let kept: Vec<String> = std::fs::read_dir(std::path::PathBuf::from(undo_dir))
        .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(kept.is_empty(), "round {round}: undo log entries left: {kept:?}");
    for dir in [tree.root.clone(), tree.root.join("moving")] {
        let leftovers: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".codespace-tmp"))
            .collect();
        assert!(leftovers.is_empty(), "round {round}: temp files left: {leftovers:?}");
    }
}
