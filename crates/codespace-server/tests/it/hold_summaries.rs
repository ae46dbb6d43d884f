//! Summaries a person can trust, through the real binary: a name a patch would create with
//! a control, separator or bidirectional character is refused before any hold is made
//! (held or not); an existing name with one is shown written out (`\u{202E}`) in the hold's
//! summary and by the operator CLI; a 5,000-file patch's summary counts every kind and
//! lists only the first files.

use serde_json::{Value, json};

use crate::approvals::{Holds, patch};
use crate::support::{call, refused};

/// Names a patch may not create, one of each kind of refused character.
const REFUSED: &[&str] = &[
    "esc\u{1b}[2Jx.txt",
    "nul\u{0}x.txt",
    "cr\rx.txt",
    "sep\u{2028}x.txt",
    "readme\u{202E}txt.hs",
    "c1\u{9b}x.txt",
    "del\u{7f}x.txt",
];

fn listed(h: &Holds) -> Value {
    let out = h.cli(&["list", "--json"]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn created_names_with_hidden_characters_are_refused_before_any_hold() {
    let h = Holds::new();
    let client = h.client().await;
    for name in REFUSED {
        let add = patch(&format!("*** Add File: {name}\n+x\n"));
        let moved = patch(&format!("*** Update File: a.txt\n*** Move to: {name}\n@@\n top\n+y\n"));
        for (ws, text) in [("c", &add), ("o", &add), ("c", &moved), ("o", &moved)] {
            let args = json!({"workspace_id": ws, "patch": text});
            let body = refused(&client, "apply_patch", args.clone(), "UNSAFE_PATH_NAME").await;
            assert_eq!(body["path"], *name, "{body}");
            let message = body["message"].as_str().unwrap();
            assert!(message.contains("\\u{") && !message.contains(name), "{message}");
            let explicit = json!({"tool": "apply_patch", "arguments": args});
            refused(&client, "approval_create", explicit, "UNSAFE_PATH_NAME").await;
        }
    }
    assert_eq!(listed(&h), json!([]), "no hold was made");
    for ws in ["c", "o"] {
        let names: Vec<_> =
            std::fs::read_dir(h.root(ws)).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["a.txt"], "nothing was written in {ws}");
        assert_eq!(h.file(ws), "top\n");
    }
    // An existing name with such a character can still be changed (it is shown escaped).
    std::fs::write(h.root("o").join("old\u{1b}.txt"), "top\n").unwrap();
    let update = patch("*** Update File: old\u{1b}.txt\n@@\n top\n+z\n");
    call(&client, "apply_patch", json!({"workspace_id": "o", "patch": update})).await.unwrap();
}

#[tokio::test]
async fn an_existing_name_with_a_bidi_mark_is_shown_written_out() {
    let h = Holds::new();
    let name = "readme\u{202E}txt.hs";
    std::fs::write(h.root("c").join(name), "top\n").unwrap();
    let client = h.client().await;
    let text = patch(&format!("*** Update File: {name}\n@@\n top\n+more\n"));
    let body = refused(
        &client,
        "apply_patch",
        json!({"workspace_id": "c", "patch": text}),
        "APPROVAL_REQUIRED",
    )
    .await;
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("update readme\\u{202E}txt.hs (+1 -0)"), "{message}");
    assert!(!message.contains('\u{202E}'), "{message}");
    let id = body["approval_id"].as_str().unwrap().to_owned();

    let rows = listed(&h);
    let summary = rows[0]["summary"].as_str().unwrap();
    assert!(
        summary.contains("readme\\u{202E}txt.hs") && !summary.contains('\u{202E}'),
        "{summary}"
    );
    // `show` prints the arguments too (the raw patch): written out as JSON escapes.
    let shown = h.cli(&["show", &id]);
    assert!(shown.status.success(), "{shown:?}");
    let stdout = String::from_utf8(shown.stdout).unwrap();
    assert!(!stdout.contains('\u{202E}'), "{stdout}");
    assert!(stdout.contains("\\u202e"), "{stdout}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert!(value["arguments"]["patch"].as_str().unwrap().contains(name), "still the same JSON");
}

#[tokio::test]
async fn a_five_thousand_file_patch_summary_counts_and_lists_the_first_fifty() {
    let h = Holds::new();
    let client = h.client().await;
    let mut body = String::new();
    for i in 0..5000 {
        body.push_str(&format!("*** Add File: many/f{i:04}.txt\n+x\n"));
    }
    body.push_str("*** Delete File: a.txt\n");
    let args = json!({"workspace_id": "o", "patch": patch(&body)});
    let created =
        call(&client, "approval_create", json!({"tool": "apply_patch", "arguments": args}))
            .await
            .unwrap();
    let summary = created["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("apply a patch in workspace o (5001 files: 5000 add, 1 delete):"),
        "{summary}"
    );
    assert_eq!(summary.lines().count(), 52, "{summary}");
    assert!(summary.contains("add many/f0049.txt (+1)") && !summary.contains("f0050"));
    assert!(summary.ends_with("... and 4951 more file(s), counted above but not listed"));
    assert!(summary.len() < 4096, "{} bytes", summary.len());
    assert_eq!(listed(&h)[0]["summary"], summary);
}

/// The operator's commands write every hidden character out, whatever ledger text they
/// print: an operation key with an escape sequence and a right-to-left override cannot
/// drive the terminal or reorder the line.
#[tokio::test]
async fn operator_commands_never_print_a_hidden_character() {
    let h = Holds::new();
    let client = h.client().await;
    let key = "k\u{1b}[2J\u{202E}yek";
    let args = json!({"workspace_id": "o", "patch": patch("*** Update File: a.txt\n@@\n top\n+k\n"), "operation_key": key});
    let done = call(&client, "apply_patch", args).await.unwrap();
    let op = done["operation_id"].as_str().unwrap().to_owned();
    for command in [vec!["operations", "list"], vec!["operations", "show", &op]] {
        let out =
            h.env.command().args(&command).arg("--operations-db").arg(&h.db).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202E}'), "{command:?}: {text:?}");
        assert!(text.contains("\\u001b[2J\\u202eyek"), "{command:?}: {text}");
    }
}
