//! Unit tests of `holds::summary`.

use super::*;

#[test]
fn a_patch_summary_names_each_file_with_its_kind_and_line_counts() {
    let text = "*** Begin Patch\n*** Add File: new.txt\n+a\n+b\n*** Delete File: old.txt\n\
                    *** Update File: src/x.rs\n*** Move to: src/y.rs\n@@\n keep\n-gone\n+here\n+too\n\
                    *** End Patch";
    let parsed = codespace_patch::parse(text).unwrap();
    let s = patch("ws", &parsed, false);
    assert_eq!(
        s,
        "apply a patch in workspace ws (3 files: 1 add, 1 delete, 1 move):\n  add new.txt (+2)\n  \
             delete old.txt\n  move src/x.rs -> src/y.rs (+2 -1)"
    );
}

#[test]
fn a_large_patch_is_counted_and_only_its_first_files_listed() {
    let mut text = String::from("*** Begin Patch\n");
    for i in 0..5000 {
        text.push_str(&format!("*** Add File: f{i:04}.txt\n+x\n"));
    }
    text.push_str("*** Delete File: gone.txt\n*** End Patch");
    let parsed = codespace_patch::parse(&text).unwrap();
    let s = patch("ws", &parsed, false);
    assert!(
        s.starts_with("apply a patch in workspace ws (5001 files: 5000 add, 1 delete):"),
        "{s}"
    );
    assert_eq!(s.lines().count(), 1 + LISTED_FILES + 1);
    assert!(s.contains("  add f0049.txt (+1)") && !s.contains("f0050"), "{s}");
    assert!(s.ends_with("... and 4951 more file(s), counted above but not listed"), "{s}");
    assert!(s.len() < 4096, "{}", s.len());
}

#[test]
fn names_are_shown_escaped_and_long_ones_cut_in_the_middle() {
    let text = "*** Begin Patch\n*** Update File: readme\u{202E}txt.hs\n@@\n-a\n+b\n*** End Patch";
    let parsed = codespace_patch::parse(text).unwrap();
    assert!(patch("ws", &parsed, false).contains("update readme\\u{202E}txt.hs (+1 -1)"));
    let long = format!("{}/end.rs", "d".repeat(1000));
    let shown = name(&long);
    assert!(shown.starts_with("ddd") && shown.ends_with("d/end.rs"), "{shown}");
    assert!(shown.contains("...(767 characters)..."), "{shown}");
}

#[test]
fn created_names_with_control_or_bidi_characters_are_refused() {
    let text = |body: &str| format!("*** Begin Patch\n{body}*** End Patch");
    let refused = |body: &str| {
        let t = text(body);
        let parsed = check_created_names(&codespace_patch::parse(&t).unwrap());
        let scanned = check_created_names_in(&t);
        assert_eq!(parsed.is_err(), scanned.is_err(), "{body:?}");
        scanned.err().map(|e| e.to_string())
    };
    let add = refused("*** Add File: a\u{1b}[2Jb\n+x\n").unwrap();
    assert!(add.starts_with("Add File name 'a\\u{001B}[2Jb' holds U+001B"), "{add}");
    let moved = refused("*** Update File: ok.txt\n*** Move to: x\u{2028}y\n@@\n-a\n+b\n").unwrap();
    assert!(moved.starts_with("Move to name"), "{moved}");
    assert!(refused("*** Add File: readme\u{202E}txt.hs\n+x\n").is_some());
    assert!(refused("*** Add File: a\u{0}b\n+x\n").is_some());
    assert!(refused("*** Add File: a\rb\n+x\n").is_some());
    // Existing names are only shown escaped: they can be updated and deleted.
    assert_eq!(
        refused("*** Update File: a\u{1b}b\n@@\n-a\n+b\n*** Delete File: c\u{202E}d\n"),
        None
    );
    assert_eq!(refused("*** Add File: fine.txt\n+x\r\n"), None);
}

#[test]
fn a_command_summary_shows_the_argv_exactly() {
    let p = ExecCommandParams {
        workspace_id: "ws".into(),
        command: vec!["sh".into(), "-c".into(), "echo \"hi there\"".into(), "\u{202E}x".into()],
        tty: Some(true),
        timeout_secs: None,
        work_id: None,
        wait_ms: None,
        max_bytes: None,
    };
    assert_eq!(
        command(&p, 30),
        r#"run ["sh","-c","echo \"hi there\"","\u{202E}x"] in workspace ws (terminal, time limit 30 s)"#
    );
}

#[test]
fn a_revert_summary_says_what_goes_back_for_each_file() {
    use codespace_types::Version;
    let file = |path: &str, kind: ChangeKind, move_from: Option<&str>| PlannedFile {
        path: path.to_owned(),
        kind,
        before_version: Version::Absent,
        after_version: Version::Absent,
        move_from: move_from.map(str::to_owned),
        before_mode: None,
    };
    let plan = [
        file("a.txt", ChangeKind::Update, None),
        file("gone.txt", ChangeKind::Delete, None),
        file("src/x.rs", ChangeKind::Delete, None),
        file("src/y.rs", ChangeKind::Move, Some("src/x.rs")),
        file("new.txt", ChangeKind::Add, None),
    ];
    let p = OperationRevertParams {
        workspace_id: "ws".into(),
        operation_id: "op-1".into(),
        operation_key: None,
        check_only: None,
    };
    assert_eq!(
        revert(&p, &plan),
        "revert operation op-1 in workspace ws (5 file(s)):\n  restore a.txt\n  re-create \
         gone.txt\n  move src/y.rs -> src/x.rs\n  remove new.txt"
    );
}

#[test]
fn a_huge_argv_is_cut_and_says_how_much_is_left_out() {
    let p = ExecCommandParams {
        workspace_id: "ws".into(),
        command: (0..10_000).map(|i| format!("arg{i}")).collect(),
        tty: None,
        timeout_secs: None,
        work_id: None,
        wait_ms: None,
        max_bytes: None,
    };
    let s = command(&p, 30);
    assert!(s.starts_with(r#"run ["arg0","arg1","#), "{}", &s[..40]);
    assert!(s.contains("more characters of 10000 arguments"), "{}", &s[s.len() - 200..]);
    assert!(s.len() < 4096 + 300, "{}", s.len());
}
