//! Unit tests for `model`: status strings and planned-file validation. (A kind or version
//! that does not parse cannot be built; reading one back is tested with the store.)

use super::*;

fn file(kind: &str, before: &str, after: &str, move_from: Option<&str>) -> PlannedFile {
    PlannedFile {
        path: "src/a.rs".to_owned(),
        kind: ChangeKind::parse(kind).unwrap(),
        before_version: before.parse().unwrap(),
        after_version: after.parse().unwrap(),
        move_from: move_from.map(str::to_owned),
        before_mode: None,
    }
}

const H1: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000001";
const H2: &str = "sha256:abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdef0123";

#[test]
fn status_strings_round_trip() {
    let strings: Vec<&str> = OpStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        strings,
        [
            "pending",
            "applying",
            "applied",
            "checked",
            "rejected",
            "failed_rolled_back",
            "failed_partial",
            "unknown"
        ]
    );
    for status in OpStatus::ALL {
        assert_eq!(OpStatus::parse(status.as_str()), Some(status));
        assert_eq!(status.to_string(), status.as_str());
    }
    assert_eq!(OpStatus::parse("Applied"), None);
    assert_eq!(OpStatus::parse(""), None);
}

#[test]
fn only_pending_and_applying_are_unfinished() {
    let unfinished: Vec<OpStatus> =
        OpStatus::ALL.into_iter().filter(|s| s.is_unfinished()).collect();
    assert_eq!(unfinished, [OpStatus::Pending, OpStatus::Applying]);
    assert!(OpStatus::ALL.into_iter().all(|s| s.is_terminal() != s.is_unfinished()));
}

#[test]
fn well_formed_files_validate() {
    assert_eq!(file("add", "absent", H1, None).validate(), Ok(()));
    assert_eq!(file("update", H1, H2, None).validate(), Ok(()));
    assert_eq!(file("delete", H1, "absent", None).validate(), Ok(()));
    assert_eq!(file("move", H1, H2, Some("src/old.rs")).validate(), Ok(()));
}

#[test]
fn malformed_files_are_refused_with_the_field() {
    let cases = [
        (file("move", H1, H2, None), "move_from"),
        (file("move", H1, H2, Some("")), "move_from"),
        (file("update", H1, H2, Some("x")), "move_from"),
        (file("add", H1, H2, None), "before_version `absent`"),
        (file("delete", H1, H2, None), "after_version `absent`"),
    ];
    for (planned, needle) in cases {
        let reason = planned.validate().expect_err("must be refused");
        assert!(reason.contains(needle), "{reason:?} should mention {needle}");
    }
    let mut empty = file("update", H1, H2, None);
    empty.path.clear();
    assert!(empty.validate().is_err());
}
