//! `find` and `grep` like a developer's tools: ignore rules (and `include_ignored`), literal
//! search with `fixed_strings`, and globs without a `/` matching at any depth.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Env, call, refused};

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, body) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, body).unwrap();
    }
}

fn paths(v: &Value) -> Vec<String> {
    v["paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect()
}

fn hits(v: &Value) -> Vec<String> {
    v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
        .collect()
}

#[tokio::test]
async fn find_and_grep_honour_ignore_rules_and_include_ignored_brings_them_back() {
    let mut env = Env::new();
    let root = env.workspace("ws", json!({}));
    write(
        &root,
        &[
            (".gitignore", "__pycache__/\n*.log\n!keep.log\n/build\n"),
            (".ignore", ".pytest_cache/\n"),
            (".git/info/exclude", "local.txt\n"),
            (".git/HEAD", "needle\n"),
            (".pytest_cache/v/cache", "needle\n"),
            ("__pycache__/m.pyc", "needle\n"),
            ("pkg/__pycache__/m.pyc", "needle\n"),
            ("pkg/.gitignore", "gen_*.py\n!gen_keep.py\n"),
            ("pkg/gen_a.py", "needle\n"),
            ("pkg/gen_keep.py", "needle\n"),
            ("pkg/m.py", "needle\n"),
            ("pkg/build/x.py", "needle\n"),
            ("build/out.txt", "needle\n"),
            ("app.log", "needle\n"),
            ("keep.log", "needle\n"),
            ("local.txt", "needle\n"),
        ],
    );
    let client = env.stdio().await;
    let visible = [
        ".gitignore",
        ".ignore",
        "keep.log",
        "pkg/.gitignore",
        "pkg/build/x.py",
        "pkg/gen_keep.py",
        "pkg/m.py",
    ];
    let found = call(&client, "find", json!({"workspace_id": "ws"})).await.unwrap();
    assert_eq!(paths(&found), visible, "nested rules, negation, dir rules, .ignore, exclude, .git");
    assert_eq!(found["incomplete"], false);
    let grep =
        call(&client, "grep", json!({"workspace_id": "ws", "pattern": "needle"})).await.unwrap();
    assert_eq!(hits(&grep), ["keep.log:1", "pkg/build/x.py:1", "pkg/gen_keep.py:1", "pkg/m.py:1"]);

    let all = call(&client, "find", json!({"workspace_id": "ws", "include_ignored": true}))
        .await
        .unwrap();
    assert_eq!(all["total"], 16, "include_ignored lists every file, .git/ included");
    assert!(paths(&all).iter().any(|p| p == ".pytest_cache/v/cache"));
    let grep_all = call(
        &client,
        "grep",
        json!({"workspace_id": "ws", "pattern": "needle", "include_ignored": true}),
    )
    .await
    .unwrap();
    assert_eq!(grep_all["matches"].as_array().unwrap().len(), 12);
    assert!(hits(&grep_all).contains(&".pytest_cache/v/cache:1".to_owned()));

    // Pages of the filtered listing are deterministic, and a rule change that hides a file
    // changes listing_version.
    let page = |offset: u64| json!({"workspace_id": "ws", "limit": 3, "offset": offset});
    let p1 = call(&client, "find", page(0)).await.unwrap();
    let p1_again = call(&client, "find", page(0)).await.unwrap();
    assert_eq!(p1, p1_again);
    let p2 = call(&client, "find", page(3)).await.unwrap();
    let p3 = call(&client, "find", page(6)).await.unwrap();
    let joined: Vec<String> = [paths(&p1), paths(&p2), paths(&p3)].concat();
    assert_eq!(joined, visible);
    std::fs::write(root.join("pkg/.gitignore"), "gen_*.py\n").unwrap();
    let after = call(&client, "find", page(0)).await.unwrap();
    assert_eq!(paths(&after), paths(&p1), "the first page itself is unchanged");
    assert_eq!(after["total"], 6, "pkg/gen_keep.py is ignored now");
    assert_ne!(after["listing_version"], p1["listing_version"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn grep_fixed_strings_searches_literal_text() {
    let mut env = Env::new();
    let root = env.workspace("ws", json!({}));
    write(&root, &[("a.py", "x = field_names(C)\ny = field_namesC\nz = FIELD_NAMES(c)\n")]);
    let client = env.stdio().await;
    let grep = |extra: Value| {
        let mut v = json!({"workspace_id": "ws", "pattern": "field_names(C)"});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    let literal = call(&client, "grep", grep(json!({"fixed_strings": true}))).await.unwrap();
    assert_eq!(hits(&literal), ["a.py:1"]);
    assert_eq!(literal["matches"][0]["text"], "x = field_names(C)");
    let regex = call(&client, "grep", grep(json!({}))).await.unwrap();
    assert_eq!(hits(&regex), ["a.py:2"], "as a regex, (C) is a group");
    let regex_off = call(&client, "grep", grep(json!({"fixed_strings": false}))).await.unwrap();
    assert_eq!(hits(&regex_off), ["a.py:2"]);
    let ci = call(&client, "grep", grep(json!({"fixed_strings": true, "case_insensitive": true})))
        .await
        .unwrap();
    assert_eq!(hits(&ci), ["a.py:1", "a.py:3"]);
    let unclosed = json!({"workspace_id": "ws", "pattern": "names(C"});
    let err = refused(&client, "grep", unclosed.clone(), "INVALID_PATTERN").await;
    assert!(err.to_string().contains("unclosed group"), "the error names the problem: {err}");
    let mut literal_unclosed = unclosed;
    literal_unclosed["fixed_strings"] = json!(true);
    assert_eq!(hits(&call(&client, "grep", literal_unclosed).await.unwrap()), ["a.py:1"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_glob_without_a_slash_matches_at_any_depth_and_a_leading_slash_anchors() {
    let mut env = Env::new();
    let root = env.workspace("ws", json!({}));
    write(
        &root,
        &[("a.txt", "t\n"), ("src/b.txt", "t\n"), ("src/deep/c.txt", "t\n"), ("d.rs", "t\n")],
    );
    let client = env.stdio().await;
    let find = |glob: &str| json!({"workspace_id": "ws", "glob": glob});
    let cases: &[(&str, &[&str])] = &[
        ("*.txt", &["a.txt", "src/b.txt", "src/deep/c.txt"]),
        ("/*.txt", &["a.txt"]),
        ("./*.txt", &["a.txt"]),
        ("src/*.txt", &["src/b.txt"]),
        ("/src/**/*.txt", &["src/b.txt", "src/deep/c.txt"]),
        ("c.txt", &["src/deep/c.txt"]),
    ];
    for (glob, want) in cases {
        assert_eq!(paths(&call(&client, "find", find(glob)).await.unwrap()), *want, "{glob}");
    }
    let grep = |glob: &str| json!({"workspace_id": "ws", "pattern": "t", "glob": glob});
    assert_eq!(
        hits(&call(&client, "grep", grep("*.txt")).await.unwrap()),
        ["a.txt:1", "src/b.txt:1", "src/deep/c.txt:1"]
    );
    assert_eq!(hits(&call(&client, "grep", grep("/*.txt")).await.unwrap()), ["a.txt:1"]);
    client.cancel().await.unwrap();
}
