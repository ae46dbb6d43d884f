//! `changes` after renames, end to end: a file replaced by rename over its path (an
//! `apply_patch`, `sed -i`) is `modified`, the server's own temporary files are never
//! listed (nor any file created and gone between two looks), a directory renamed within the workspace or in from outside lists its files under
//! the new name, and one renamed away lists its old files as `removed`.

use serde_json::{Value, json};

use crate::process::{exec, wait_exit};
use crate::support::{Env, call};

fn kinds(r: &Value) -> Vec<(String, String)> {
    r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["path"].as_str().unwrap().to_owned(), c["kind"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test]
async fn changes_say_what_renames_did() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write", "sandbox": "off"}));
    std::fs::write(root.join("patched.txt"), "old\n").unwrap();
    std::fs::write(root.join("edited.txt"), "before\n").unwrap();
    for dir in ["dir", "away"] {
        std::fs::create_dir_all(root.join(dir).join("deep")).unwrap();
        std::fs::write(root.join(dir).join("a.txt"), "a\n").unwrap();
        std::fs::write(root.join(dir).join("deep/b.txt"), "b\n").unwrap();
    }
    let incoming = env.path().join("incoming");
    std::fs::create_dir_all(incoming.join("sub")).unwrap();
    std::fs::write(incoming.join("x.txt"), "x\n").unwrap();
    std::fs::write(incoming.join("sub/y.txt"), "y\n").unwrap();
    let outside = env.path().join("outside");
    let client = env.stdio().await;
    let start = call(&client, "changes", json!({"workspace_id": "w"})).await.unwrap();

    let patch = "*** Begin Patch\n*** Update File: patched.txt\n@@\n-old\n+new\n*** End Patch\n";
    let r =
        call(&client, "apply_patch", json!({"workspace_id": "w", "patch": patch})).await.unwrap();
    assert_eq!(r["status"], "applied", "{r}");
    let script = format!(
        "sed -i s/before/after/ edited.txt && mv dir moved && mv {} arrived && mv away {}",
        incoming.display(),
        outside.display()
    );
    let id = exec(&client, "w", &["sh", "-c", &script], false).await;
    assert_eq!(wait_exit(&client, &id).await["exit_code"], 0);

    let after = call(&client, "changes", json!({"workspace_id": "w", "since": start["cursor"]}))
        .await
        .unwrap();
    assert_eq!(after["resync_required"], false, "{after}");
    let got = kinds(&after);
    let want = [
        ("patched.txt", "modified"),
        ("edited.txt", "modified"),
        ("dir/a.txt", "removed"),
        ("dir/deep/b.txt", "removed"),
        ("moved/a.txt", "created"),
        ("moved/deep/b.txt", "created"),
        ("arrived/x.txt", "created"),
        ("arrived/sub/y.txt", "created"),
        ("away/a.txt", "removed"),
        ("away/deep/b.txt", "removed"),
    ];
    for (path, kind) in want {
        assert!(
            got.contains(&(path.to_owned(), kind.to_owned())),
            "{path} {kind} missing: {got:?}"
        );
    }
    assert!(
        !got.iter().any(|(p, _)| p.contains(".codespace-tmp.") || p.contains("codespace-cookie")),
        "{got:?}"
    );
    // Nothing that neither existed before nor exists now (sed's own temporary file).
    assert!(!got.iter().any(|(p, _)| p.starts_with("sed")), "{got:?}");
    client.cancel().await.unwrap();
}
