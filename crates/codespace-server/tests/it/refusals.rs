//! Refused patches through the real binary: every bad patch of the corpus
//! (`codespace-gateway/tests/refusals.json`) is refused with its code, `reason`,
//! `patch_line`, `chunk`, `path` and `nearest`, and nothing is written; a rejected
//! operation keeps the same details in `operation_status`; an over-long path names the
//! operation that wrote it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Env, call, refused};

const CORPUS: &str = include_str!("../../../codespace-gateway/tests/refusals.json");

/// Lays the corpus's tree under `root`: its files, `data.bin` (not UTF-8) and `link.txt`
/// (a symbolic link to `notes.txt`).
fn seed(root: &Path, files: &Value) {
    for (path, content) in files.as_object().unwrap() {
        let at = root.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, content.as_str().unwrap()).unwrap();
    }
    std::fs::write(root.join("data.bin"), [0xff, 0xfe, 0x00]).unwrap();
    std::os::unix::fs::symlink("notes.txt", root.join("link.txt")).unwrap();
}

/// Every entry under `dir`: a file's bytes, a link's target, a directory as empty.
fn snapshot(dir: &Path, into: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.display().to_string();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_symlink() {
            into.insert(
                name,
                std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes(),
            );
        } else if meta.is_dir() {
            into.insert(name, vec![]);
            snapshot(&path, into);
        } else {
            into.insert(name, std::fs::read(&path).unwrap());
        }
    }
}

fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut all = BTreeMap::new();
    snapshot(root, &mut all);
    all
}

/// The fields a case pins, as `(field, wanted, got)`.
fn pinned(case: &Value, body: &Value) -> Vec<(String, Value, Value)> {
    let mut checks = vec![];
    for field in ["code", "reason", "patch_line", "chunk", "path"] {
        if field == "patch_line" || case.get(field).is_some() {
            checks.push((field.to_owned(), case[field].clone(), body[field].clone()));
        }
    }
    match &case["nearest"] {
        Value::Object(want) => {
            for (k, v) in want {
                checks.push((format!("nearest.{k}"), v.clone(), body["nearest"][k].clone()));
            }
        }
        _ => checks.push(("nearest".to_owned(), Value::Null, body["nearest"].clone())),
    }
    checks
}

#[tokio::test]
async fn every_bad_patch_of_the_corpus_is_refused_with_its_reason_and_place() {
    let doc: Value = serde_json::from_str(CORPUS).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 30, "the corpus has {} cases", cases.len());
    let mut env = Env::new();
    let roots: Vec<_> = (0..cases.len())
        .map(|i| {
            let root = env.workspace(&format!("c{i}"), json!({"profile": "workspace-write"}));
            seed(&root, &doc["files"]);
            root
        })
        .collect();
    let client = env.stdio().await;
    let mut with_nearest = 0;
    for (i, case) in cases.iter().enumerate() {
        let before = tree(&roots[i]);
        let args = json!({"workspace_id": format!("c{i}"), "patch": case["patch"]});
        let code = case["code"].as_str().unwrap();
        let body = refused(&client, "apply_patch", args, code).await;
        for (field, want, got) in pinned(case, &body) {
            assert_eq!(got, want, "{}: {field} in {body:#}", case["name"]);
        }
        with_nearest += usize::from(body.get("nearest").is_some());
        assert_eq!(tree(&roots[i]), before, "{}: nothing is written", case["name"]);
    }
    eprintln!("{} bad patches refused, {with_nearest} with a nearest line", cases.len());
}

#[tokio::test]
async fn a_rejected_operation_keeps_its_reason_and_nearest_line() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write"}));
    std::fs::write(root.join("a.py"), "def total(xs):\n    return sum(xs)\n").unwrap();
    let client = env.stdio().await;
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n def total(xs):\n-    return sum(ys)\n+    return sum(xs) or 0\n*** End Patch\n";
    let args = json!({"workspace_id": "w", "patch": patch, "operation_key": "k"});
    let body = refused(&client, "apply_patch", args, "INVALID_PATCH").await;
    assert_eq!(body["reason"], "context_not_found");
    assert_eq!((body["patch_line"].clone(), body["chunk"].clone()), (json!(5), json!(1)));
    assert_eq!(body["nearest"]["line"], 2);
    assert_eq!(body["nearest"]["token"], json!({"expected": "ys", "found": "xs"}));
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("nearest: line 2 of the file"), "{message}");
    let status =
        call(&client, "operation_status", json!({"workspace_id": "w", "operation_key": "k"}))
            .await
            .unwrap();
    assert_eq!(status["status"], "rejected");
    let mut kept = status["error"].clone();
    kept.as_object_mut().unwrap().remove("operation_id");
    let mut answered = body.clone();
    answered.as_object_mut().unwrap().remove("operation_id");
    assert_eq!(kept, answered, "the ledger keeps the refusal as it was answered");
}

/// A path beneath a directory the patch creates is never looked up; its length is checked
/// afterwards, and the refusal still names the operation that wrote it.
#[tokio::test]
async fn an_over_long_path_is_refused_under_its_own_operation() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({"profile": "workspace-write"}));
    std::fs::write(root.join("notes.txt"), "alpha\n").unwrap();
    let client = env.stdio().await;
    let long = format!("new/{}.txt", "n".repeat(300));
    let add = format!("*** Begin Patch\n*** Add File: {long}\n+x\n*** End Patch\n");
    let body =
        refused(&client, "apply_patch", json!({"workspace_id": "w", "patch": add}), "PATH_ESCAPE")
            .await;
    let message = body["message"].as_str().unwrap();
    assert!(message.starts_with(&format!("Add File '{long}' (patch line 2)")), "{message}");
    assert_eq!(
        (body["reason"].clone(), body["patch_line"].clone()),
        (json!("path_escape"), json!(2))
    );
    let deep = format!("new/{}x.txt", "d/".repeat(2100));
    let moved = format!(
        "*** Begin Patch\n*** Add File: keep.txt\n+k\n*** Update File: notes.txt\n*** Move to: {deep}\n@@\n alpha\n*** End Patch\n"
    );
    let body = refused(
        &client,
        "apply_patch",
        json!({"workspace_id": "w", "patch": moved}),
        "PATH_ESCAPE",
    )
    .await;
    let message = body["message"].as_str().unwrap();
    assert!(message.starts_with("Move to 'new/d/d/"), "{message}");
    assert!(message.contains("(patch line 4)"), "{message}");
    assert!(!root.join("new").exists() && !root.join("keep.txt").exists());
}
