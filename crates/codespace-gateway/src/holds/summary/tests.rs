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
        "apply a patch in workspace ws (3 file(s)):\n  add new.txt (+2)\n  delete old.txt\n  \
             move src/x.rs -> src/y.rs (+2 -1)"
    );
}

#[test]
fn a_command_summary_shows_the_argv_exactly() {
    let p = ExecCommandParams {
        workspace_id: "ws".into(),
        command: vec!["sh".into(), "-c".into(), "echo \"hi there\"".into()],
        tty: Some(true),
        timeout_secs: None,
        work_id: None,
        wait_ms: None,
        max_bytes: None,
    };
    assert_eq!(
        command(&p, 30),
        r#"run ["sh","-c","echo \"hi there\""] in workspace ws (terminal, time limit 30 s)"#
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
