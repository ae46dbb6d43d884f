//! Security cases P1-P9 through the real server: escapes, prefixes, symlinks (leaf,
//! ancestor, chain, inside), a live symlink-swap race, magic links, special files, hostile
//! names, hostile trees.

use std::os::unix::fs::symlink;
use std::os::unix::net::UnixListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Env, call, mkfifo, refused};

const SECRET: &str = "TOP-SECRET\n";

#[tokio::test]
async fn p1_p2_escapes_and_prefix_siblings() {
    let mut env = Env::new();
    let root = env.workspace("app", json!({}));
    let evil = env.workspace("app-evil", json!({}));
    std::fs::write(evil.join("x"), "evil").unwrap();
    std::fs::write(root.join("~"), "tilde is a name").unwrap();
    let client = env.stdio().await;
    let escapes = [
        "..",
        "../outside/secret.txt",
        "a/../../outside/secret.txt",
        "../app-evil/x",
        "/etc/passwd",
        &format!("{}/x", evil.display()),
        "",
        "a\0b",
        ".",
    ];
    for p in escapes {
        let body =
            refused(&client, "read", json!({"workspace_id": "app", "path": p}), "PATH_ESCAPE")
                .await;
        assert!(!body["message"].as_str().unwrap().contains("TOP-SECRET"));
    }
    // `~` is not expanded: it is a file name like any other.
    let t = call(&client, "read", json!({"workspace_id": "app", "path": "~"})).await.unwrap();
    assert_eq!(t["content"], "tilde is a name");
    refused(
        &client,
        "read",
        json!({"workspace_id": "app", "path": "~/.bashrc"}),
        "PATH_NOT_DIRECTORY",
    )
    .await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn p3_p5_symlinks_are_never_followed() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    let outside = env.path().join("outside");
    std::fs::create_dir(root.join("real")).unwrap();
    std::fs::write(root.join("real/in.txt"), "inside").unwrap();
    symlink(outside.join("secret.txt"), root.join("leak")).unwrap();
    symlink(&outside, root.join("src")).unwrap();
    symlink("hop2", root.join("hop1")).unwrap();
    symlink("hop3", root.join("hop2")).unwrap();
    symlink(outside.join("secret.txt"), root.join("hop3")).unwrap();
    symlink("real/in.txt", root.join("inside-link")).unwrap();
    symlink("real", root.join("inside-dir")).unwrap();
    symlink("/proc/self/root/etc/passwd", root.join("magic")).unwrap();
    symlink("/proc/self/cwd", root.join("cwd")).unwrap();
    symlink("/dev/zero", root.join("zero")).unwrap();
    let client = env.stdio().await;
    for p in [
        "leak",
        "src/secret.txt",
        "hop1",
        "inside-link",
        "inside-dir/in.txt",
        "magic",
        "cwd/secret.txt",
        "zero",
    ] {
        let body =
            refused(&client, "read", json!({"workspace_id": "ro", "path": p}), "SYMLINK_REJECTED")
                .await;
        assert_eq!(body["path"], p);
    }
    let v = call(
        &client,
        "version",
        json!({"workspace_id": "ro", "paths": ["leak", "src/secret.txt"]}),
    )
    .await
    .unwrap();
    assert!(
        v["versions"].as_array().unwrap().iter().all(|e| e["error"]["code"] == "SYMLINK_REJECTED")
    );
    let g = call(&client, "grep", json!({"workspace_id": "ro", "pattern": "SECRET|root:"}))
        .await
        .unwrap();
    assert_eq!(g["matches"], json!([]), "grep never reads through a link");
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).unwrap(), SECRET);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn p4_live_symlink_swap_race_never_escapes() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    let outside = env.path().join("outside");
    std::fs::create_dir(root.join("race")).unwrap();
    std::fs::write(root.join("race/secret.txt"), "inside\n").unwrap();
    symlink(&outside, root.join("swap")).unwrap();
    let client = env.stdio().await;

    // A local process flips `race` between the real directory and a link to the outside,
    // atomically (RENAME_EXCHANGE), as fast as it can while the agent reads.
    let stop = Arc::new(AtomicBool::new(false));
    let flips = {
        let stop = stop.clone();
        let root = root.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    root.join("race"),
                    rustix::fs::CWD,
                    root.join("swap"),
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                n += 1;
            }
            n
        })
    };
    let (mut inside, mut refusals, mut escapes) = (0u32, 0u32, 0u32);
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        match call(&client, "read", json!({"workspace_id": "ro", "path": "race/secret.txt"})).await
        {
            Ok(r) if r["content"] == "inside\n" => inside += 1,
            Ok(r) => {
                assert!(r["content"] != SECRET, "escaped: {r}");
                escapes += 1;
            }
            Err(e) => {
                assert!(
                    ["SYMLINK_REJECTED", "FILE_NOT_FOUND"].contains(&e["code"].as_str().unwrap()),
                    "{e}"
                );
                refusals += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flips.join().unwrap();
    eprintln!("race: {flips} flips, {inside} inside reads, {refusals} refusals, {escapes} escapes");
    assert_eq!(escapes, 0);
    assert!(inside + refusals > 100, "the race must actually run");
    assert!(refusals > 0, "the swap must be observed at least once");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn p7_special_files_are_refused_without_blocking() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    mkfifo(&root.join("fifo"));
    let _sock = UnixListener::bind(root.join("sock")).unwrap();
    // A character device node (root can create one): /dev/null's numbers.
    let dev_made = rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("null"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    )
    .is_ok();
    let client = env.stdio().await;
    let mut paths = vec!["fifo", "sock"];
    if dev_made {
        paths.push("null");
    } else {
        eprintln!(
            "p7: mknod of a character device not permitted here; device case covered by codespace-fs tests"
        );
    }
    for p in paths {
        let started = Instant::now();
        let body = refused(
            &client,
            "read",
            json!({"workspace_id": "ro", "path": p}),
            "SPECIAL_FILE_REJECTED",
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(5), "{p} must not block");
        assert_eq!(body["path"], p);
        let v =
            call(&client, "version", json!({"workspace_id": "ro", "paths": [p]})).await.unwrap();
        assert_eq!(v["versions"][0]["error"]["code"], "SPECIAL_FILE_REJECTED");
    }
    let f = call(&client, "find", json!({"workspace_id": "ro"})).await.unwrap();
    assert_eq!(f["paths"], json!([]), "special files are never listed");
    let g = call(&client, "grep", json!({"workspace_id": "ro", "pattern": "x"})).await.unwrap();
    assert_eq!(g["files_searched"], 0);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn p8_hostile_names() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    let nfc = "caf\u{e9}.txt";
    let nfd = "cafe\u{301}.txt";
    std::fs::write(root.join(nfc), "nfc").unwrap();
    std::fs::write(root.join(nfd), "nfd").unwrap();
    let name255 = "n".repeat(255);
    std::fs::write(root.join(&name255), "long name").unwrap();
    let client = env.stdio().await;
    assert_eq!(
        call(&client, "read", json!({"workspace_id": "ro", "path": nfc})).await.unwrap()["content"],
        "nfc"
    );
    assert_eq!(
        call(&client, "read", json!({"workspace_id": "ro", "path": nfd})).await.unwrap()["content"],
        "nfd"
    );
    assert_eq!(
        call(&client, "read", json!({"workspace_id": "ro", "path": name255})).await.unwrap()["content"],
        "long name"
    );
    let long_component = "n".repeat(256);
    let long_path = vec!["d"; 2100].join("/");
    for p in [long_component.as_str(), long_path.as_str(), "a\0/etc/passwd", "x\0"] {
        refused(&client, "read", json!({"workspace_id": "ro", "path": p}), "PATH_ESCAPE").await;
    }
    let f = call(&client, "find", json!({"workspace_id": "ro", "glob": "caf*"})).await.unwrap();
    assert_eq!(f["paths"].as_array().unwrap().len(), 2, "no normalisation merges the two names");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn p9_hostile_trees_are_walked_without_following() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::create_dir(root.join("a")).unwrap();
    std::fs::write(root.join("a/f.txt"), "f").unwrap();
    symlink(".", root.join("a/loop")).unwrap();
    symlink("/", root.join("slash")).unwrap();
    symlink("..", root.join("up")).unwrap();
    let client = env.stdio().await;
    let started = Instant::now();
    let f = call(&client, "find", json!({"workspace_id": "ro", "glob": "**"})).await.unwrap();
    assert_eq!(f["paths"], json!(["a/f.txt"]));
    assert_eq!(f["incomplete"], false);
    assert!(started.elapsed() < Duration::from_secs(10));
    client.cancel().await.unwrap();
}
