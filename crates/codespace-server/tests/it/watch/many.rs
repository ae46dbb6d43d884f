//! `version` of many paths end to end: enough cached paths that their directories are held
//! across calls, and a held directory never answers for a path that names something else
//! now, nor saves the stat that sees a write through a hard link outside the workspace.

use serde_json::{Value, json};

use super::{age_files, running, sha, watch_info};
use crate::support::{Client, Env, call};

const DIRS: usize = codespace_watch::HOLD_FROM_HITS + 8;

async fn versions(client: &Client) -> Vec<Value> {
    let paths: Vec<String> = (0..DIRS).map(|i| format!("d{i}/x.txt")).collect();
    let v = call(client, "version", json!({"workspace_id": "w", "paths": paths})).await.unwrap();
    v["versions"].as_array().unwrap().clone()
}

#[tokio::test]
async fn many_cached_versions_follow_swapped_directories_and_writes_through_outside_links() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    let outside = env.path().join("outside");
    std::fs::create_dir_all(outside.join("d1")).unwrap();
    std::fs::write(outside.join("d1/x.txt"), "old 1").unwrap();
    for i in 0..DIRS {
        std::fs::create_dir(root.join(format!("d{i}"))).unwrap();
        std::fs::write(root.join(format!("d{i}/x.txt")), format!("old {i}")).unwrap();
    }
    age_files();
    let client = env.stdio().await;
    call(&client, "version", json!({"workspace_id": "w", "paths": ["d0/x.txt"]})).await.unwrap();
    running(&client, "w").await;
    // Hashed and cached, then hit (the directories held), then hit through them.
    for _ in 0..3 {
        let got = versions(&client).await;
        for (i, v) in got.iter().enumerate() {
            assert_eq!(v["version"], sha(format!("old {i}").as_bytes()), "{v}");
        }
    }
    let hits = watch_info(&client, "w").await["version_cache_hits"].as_u64().unwrap();
    assert!(hits >= 2 * DIRS as u64, "{hits}");
    std::fs::rename(root.join("d0"), root.join("d0.old")).unwrap();
    std::fs::create_dir(root.join("d0")).unwrap();
    std::fs::write(root.join("d0/x.txt"), "new 0").unwrap();
    std::fs::rename(root.join("d1"), root.join("d1.old")).unwrap();
    std::os::unix::fs::symlink(outside.join("d1"), root.join("d1")).unwrap();
    std::fs::hard_link(root.join("d2/x.txt"), outside.join("link")).unwrap();
    std::fs::write(outside.join("link"), "new 2").unwrap();
    let got = versions(&client).await;
    assert_eq!(got[0]["version"], sha(b"new 0"), "{}", got[0]);
    assert_eq!(got[1]["error"]["code"], "SYMLINK_REJECTED", "{}", got[1]);
    assert_eq!(got[2]["version"], sha(b"new 2"), "{}", got[2]);
    for (i, v) in got.iter().enumerate().skip(3) {
        assert_eq!(v["version"], sha(format!("old {i}").as_bytes()), "{v}");
    }
    let now = watch_info(&client, "w").await["version_cache_hits"].as_u64().unwrap();
    assert_eq!(now, hits + DIRS as u64 - 3, "the others still hit");
}
