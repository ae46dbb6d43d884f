//! `read`, `find`, `grep` and `version` semantics over stdio: windows, versions, pages,
//! globs, caps.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{Env, call, mkfifo, refused};

fn sha(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    format!("sha256:{}", hex::encode(d))
}

#[tokio::test]
async fn read_windows_and_whole_file_versions() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    let body: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(root.join("big.txt"), &body).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/x.txt"), "x\n").unwrap();
    std::fs::write(root.join("bad.bin"), [0x66, 0xff, 0xfe, 0x67]).unwrap();
    let client = env.stdio().await;
    let ws = |extra: Value| {
        let mut v = json!({"workspace_id": "ro"});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };

    let whole = call(&client, "read", ws(json!({"path": "big.txt"}))).await.unwrap();
    assert_eq!(whole["content"].as_str().unwrap().as_bytes(), &body[..]);
    assert_eq!(whole["version"], sha(&body));
    assert_eq!(whole["truncated"], false);
    assert_eq!(whole["byte_count"], 3000);
    assert!(whole.get("offset").is_none() && whole.get("next_offset").is_none());

    let w1 = call(&client, "read", ws(json!({"path": "big.txt", "limit": 1000}))).await.unwrap();
    assert_eq!(w1["truncated"], true);
    assert_eq!(w1["next_offset"], 1000);
    assert_eq!(w1["version"], sha(&body), "the version is of the whole file, not the window");
    let w3 = call(&client, "read", ws(json!({"path": "big.txt", "offset": 2500, "limit": 1000})))
        .await
        .unwrap();
    assert_eq!(w3["offset"], 2500);
    assert_eq!(w3["byte_count"], 500);
    assert_eq!(w3["truncated"], false);
    assert_eq!(w3["content"].as_str().unwrap().as_bytes(), &body[2500..]);
    let past =
        call(&client, "read", ws(json!({"path": "big.txt", "offset": 99999}))).await.unwrap();
    assert_eq!(past["byte_count"], 0);
    assert_eq!(past["content"], "");
    assert_eq!(past["truncated"], false);

    let normalized =
        call(&client, "read", ws(json!({"path": "./sub/../sub/x.txt"}))).await.unwrap();
    assert_eq!(normalized["path"], "sub/x.txt");
    let binary = call(&client, "read", ws(json!({"path": "bad.bin"}))).await.unwrap();
    assert_eq!(
        (binary["encoding"].as_str(), binary["content"].as_str()),
        (Some("resource"), Some(""))
    );
    assert_eq!(binary["byte_count"], 4);
    assert_eq!(
        call(&client, "read", ws(json!({"path": "sub/x.txt"}))).await.unwrap()["encoding"],
        "utf-8"
    );

    for limit in [0u64, 1_048_577, u64::from(u32::MAX) + 7] {
        refused(&client, "read", ws(json!({"path": "big.txt", "limit": limit})), "OUTPUT_LIMIT")
            .await;
    }
    refused(&client, "read", ws(json!({"path": "missing.txt"})), "FILE_NOT_FOUND").await;
    refused(&client, "read", ws(json!({"path": "missing/deeper.txt"})), "FILE_NOT_FOUND").await;
    refused(&client, "read", ws(json!({"path": "big.txt/child"})), "PATH_NOT_DIRECTORY").await;
    refused(&client, "read", ws(json!({"path": "sub"})), "SPECIAL_FILE_REJECTED").await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn find_globs_pages_and_listing_versions() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    for p in [
        "b.rs",
        "a.rs",
        "src/main.rs",
        "src/lib.rs",
        "src/deep/x.rs",
        "src/deep/y.toml",
        ".hidden/h.rs",
        "README.md",
        "docs/README.md",
        "src/q.rs",
    ] {
        let full = root.join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, p).unwrap();
    }
    symlink(root.join("a.rs"), root.join("link.rs")).unwrap();
    symlink(env.path().join("outside"), root.join("outlink")).unwrap();
    mkfifo(&root.join("fifo.rs"));
    let client = env.stdio().await;
    let find = |glob: Option<&str>| {
        let mut a = json!({"workspace_id": "ro"});
        if let Some(g) = glob {
            a["glob"] = json!(g);
        }
        a
    };
    let paths = |v: &Value| {
        v["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };

    let all = call(&client, "find", find(None)).await.unwrap();
    assert_eq!(
        paths(&all),
        [
            ".hidden/h.rs",
            "README.md",
            "a.rs",
            "b.rs",
            "docs/README.md",
            "src/deep/x.rs",
            "src/deep/y.toml",
            "src/lib.rs",
            "src/main.rs",
            "src/q.rs"
        ],
        "sorted, hidden included, symlinks and FIFOs excluded, links not followed"
    );
    assert_eq!(all["incomplete"], false);
    assert_eq!(all["total"], 10);
    let cases: &[(&str, &[&str])] = &[
        ("/*.rs", &["a.rs", "b.rs"]),
        ("./*.rs", &["a.rs", "b.rs"]),
        (
            "**/*.rs",
            &[
                ".hidden/h.rs",
                "a.rs",
                "b.rs",
                "src/deep/x.rs",
                "src/lib.rs",
                "src/main.rs",
                "src/q.rs",
            ],
        ),
        ("src/?.rs", &["src/q.rs"]),
        ("src/[lm]*.rs", &["src/lib.rs", "src/main.rs"]),
        (
            "src/**/*.{rs,toml}",
            &["src/deep/x.rs", "src/deep/y.toml", "src/lib.rs", "src/main.rs", "src/q.rs"],
        ),
        ("/README.md", &["README.md"]),
        ("README.md", &["README.md", "docs/README.md"]),
        ("**/README.md", &["README.md", "docs/README.md"]),
        ("nothing*", &[]),
    ];
    for (glob, want) in cases {
        assert_eq!(
            paths(&call(&client, "find", find(Some(glob))).await.unwrap()),
            *want,
            "glob {glob}"
        );
    }

    let p1 = call(&client, "find", json!({"workspace_id": "ro", "limit": 4})).await.unwrap();
    assert_eq!(paths(&p1), paths(&all)[..4]);
    assert_eq!((p1["truncated"].clone(), p1["next_offset"].clone()), (json!(true), json!(4)));
    let p3 = call(&client, "find", json!({"workspace_id": "ro", "limit": 4, "offset": 8}))
        .await
        .unwrap();
    assert_eq!(paths(&p3), paths(&all)[8..]);
    assert_eq!(p3["truncated"], false);
    assert!(p3.get("next_offset").is_none());
    assert_eq!(p1["listing_version"], p3["listing_version"], "same set, same listing_version");
    let beyond = call(&client, "find", json!({"workspace_id": "ro", "offset": 50})).await.unwrap();
    assert!(paths(&beyond).is_empty());
    std::fs::write(root.join("new.rs"), "n").unwrap();
    let after = call(&client, "find", json!({"workspace_id": "ro", "limit": 4})).await.unwrap();
    assert_ne!(
        after["listing_version"], p1["listing_version"],
        "a changed set changes listing_version"
    );

    for limit in [0u64, 10_001] {
        refused(&client, "find", json!({"workspace_id": "ro", "limit": limit}), "OUTPUT_LIMIT")
            .await;
    }
    for bad in ["src/[ab", "{a,b", "//abs/*.rs"] {
        refused(&client, "find", find(Some(bad)), "INVALID_PATTERN").await;
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn grep_matches_pages_binary_and_long_lines() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn alpha() {}\nlet Needle = 1;\nneedle again\r\n")
        .unwrap();
    std::fs::write(root.join("src/b.txt"), "no match here\nneedle in b\n").unwrap();
    std::fs::write(root.join("bin.dat"), b"needle\0binary\n").unwrap();
    let long = format!("needle{}", "é".repeat(600));
    std::fs::write(root.join("long.txt"), format!("{long}\n")).unwrap();
    symlink(env.path().join("outside/secret.txt"), root.join("leak.txt")).unwrap();
    std::fs::write(env.path().join("outside/secret.txt"), "needle outside\n").unwrap();
    let client = env.stdio().await;
    let grep = |extra: Value| {
        let mut v = json!({"workspace_id": "ro", "pattern": "needle"});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    let r = call(&client, "grep", grep(json!({}))).await.unwrap();
    let m = r["matches"].as_array().unwrap();
    let got: Vec<(String, u64)> = m
        .iter()
        .map(|m| (m["path"].as_str().unwrap().to_owned(), m["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        got,
        [("long.txt".to_owned(), 1), ("src/a.rs".to_owned(), 3), ("src/b.txt".to_owned(), 2)]
    );
    assert_eq!(r["binary_files_skipped"], 1);
    assert_eq!(r["truncated"], false);
    assert_eq!(r["incomplete"], false);
    assert_eq!(m[1]["text"], "needle again", "terminator (CRLF) stripped");
    let cut = &m[0];
    assert_eq!(cut["text_truncated"], true);
    assert!(cut["text"].as_str().unwrap().len() <= 512);
    assert!(cut["text"].as_str().unwrap().starts_with("needle"));

    let ci = call(&client, "grep", grep(json!({"case_insensitive": true}))).await.unwrap();
    assert_eq!(ci["matches"].as_array().unwrap().len(), 4);
    let only_rs = call(&client, "grep", grep(json!({"glob": "**/*.rs", "case_insensitive": true})))
        .await
        .unwrap();
    assert_eq!(only_rs["matches"].as_array().unwrap().len(), 2);
    let re = call(&client, "grep", json!({"workspace_id": "ro", "pattern": r"^fn \w+\(\)"}))
        .await
        .unwrap();
    assert_eq!(re["matches"][0]["text"], "fn alpha() {}");

    let page1 =
        call(&client, "grep", grep(json!({"limit": 2, "case_insensitive": true}))).await.unwrap();
    assert_eq!(page1["matches"].as_array().unwrap().len(), 2);
    assert_eq!((page1["truncated"].clone(), page1["next_offset"].clone()), (json!(true), json!(2)));
    let page2 =
        call(&client, "grep", grep(json!({"limit": 2, "offset": 2, "case_insensitive": true})))
            .await
            .unwrap();
    assert_eq!(page2["matches"].as_array().unwrap(), &ci["matches"].as_array().unwrap()[2..]);
    assert_eq!(page2["truncated"], false);

    refused(
        &client,
        "grep",
        json!({"workspace_id": "ro", "pattern": "(unclosed"}),
        "INVALID_PATTERN",
    )
    .await;
    refused(&client, "grep", grep(json!({"glob": "[x"})), "INVALID_PATTERN").await;
    refused(&client, "grep", grep(json!({"limit": 0})), "OUTPUT_LIMIT").await;
    refused(&client, "grep", grep(json!({"limit": 2001})), "OUTPUT_LIMIT").await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn version_many_paths_absent_and_per_path_errors() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    std::fs::write(root.join("a.txt"), "A").unwrap();
    symlink("a.txt", root.join("link")).unwrap();
    std::fs::create_dir(root.join("dir")).unwrap();
    let client = env.stdio().await;
    let r = call(
        &client,
        "version",
        json!({"workspace_id": "ro", "paths": ["a.txt", "missing.txt", "nope/deeper", "link", "../x", "dir", "a.txt/c"]}),
    )
    .await
    .unwrap();
    let v = r["versions"].as_array().unwrap();
    assert_eq!(v[0], json!({"path": "a.txt", "version": sha(b"A")}));
    assert_eq!(v[1]["version"], "absent");
    assert_eq!(v[2]["version"], "absent");
    let codes: Vec<&str> = v[3..].iter().map(|e| e["error"]["code"].as_str().unwrap()).collect();
    assert_eq!(
        codes,
        ["SYMLINK_REJECTED", "PATH_ESCAPE", "SPECIAL_FILE_REJECTED", "PATH_NOT_DIRECTORY"]
    );
    assert!(v[3..].iter().all(|e| e.get("version").is_none()));
    let read = call(&client, "read", json!({"workspace_id": "ro", "path": "a.txt"})).await.unwrap();
    assert_eq!(read["version"], v[0]["version"], "read and version agree");

    let many: Vec<String> = (0..1000).map(|i| format!("f{i}")).collect();
    assert_eq!(call(&client, "version", json!({"workspace_id": "ro", "paths": many})).await.unwrap()["versions"].as_array().unwrap().len(), 1000);
    let too_many: Vec<String> = (0..1001).map(|i| format!("f{i}")).collect();
    refused(&client, "version", json!({"workspace_id": "ro", "paths": too_many}), "OUTPUT_LIMIT")
        .await;
    assert_eq!(
        call(&client, "version", json!({"workspace_id": "ro", "paths": []})).await.unwrap()["versions"],
        json!([])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn walk_caps_report_incomplete() {
    let mut env = Env::new();
    let root = env.workspace("ro", json!({}));
    // Depth: a chain 70 directories deep with a file at the bottom.
    let mut deep = root.join("deep");
    for i in 0..70 {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("bottom.txt"), "x").unwrap();
    std::fs::write(root.join("top.txt"), "x").unwrap();
    let client = env.stdio().await;
    let r = call(&client, "find", json!({"workspace_id": "ro"})).await.unwrap();
    assert_eq!(r["incomplete"], true, "depth cap hit");
    assert_eq!(r["paths"], json!(["top.txt"]));
    let g = call(&client, "grep", json!({"workspace_id": "ro", "pattern": "x"})).await.unwrap();
    assert_eq!(g["incomplete"], true);
    client.cancel().await.unwrap();

    // Directory cap: 10,001 directories.
    let mut env = Env::new();
    let root = env.workspace("wide", json!({}));
    for i in 0..10_001 {
        std::fs::create_dir(root.join(format!("d{i:05}"))).unwrap();
    }
    let client = env.stdio().await;
    let r = call(&client, "find", json!({"workspace_id": "wide"})).await.unwrap();
    assert_eq!(r["incomplete"], true, "directory cap hit");
    client.cancel().await.unwrap();
}
