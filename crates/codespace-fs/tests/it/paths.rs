//! P1 (traversal), P2 (shared-prefix sibling) and P8 (hostile names).

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;

use codespace_fs::{FsError, PathEscapeReason, Root, Version, WalkLimits, WorkspacePath};

use crate::support::{Fx, SECRET, p};

fn escape_reason(s: &str) -> PathEscapeReason {
    match WorkspacePath::parse(s) {
        Err(FsError::PathEscape { reason, .. }) => reason,
        other => panic!("{s:?}: expected PathEscape, got {other:?}"),
    }
}

#[test]
fn p1_traversal_and_absolute_paths_are_refused() {
    let fx = Fx::new();
    let before = fx.outside_snapshot();
    for bad in
        ["..", "../outside/secret.txt", "a/../../outside/secret.txt", "./../outside/secret.txt"]
    {
        assert_eq!(escape_reason(bad), PathEscapeReason::ParentEscape, "{bad:?}");
    }
    // `ws/../other-ws`: the sibling workspace named through the parent.
    assert_eq!(escape_reason("../ws/../outside/secret.txt"), PathEscapeReason::ParentEscape);
    let absolute = fx.outside.join("secret.txt");
    assert_eq!(escape_reason(absolute.to_str().unwrap()), PathEscapeReason::Absolute);
    assert_eq!(escape_reason("/etc/passwd"), PathEscapeReason::Absolute);
    assert_eq!(fx.outside_snapshot(), before);
}

#[test]
fn p1_tilde_is_a_plain_name() {
    let fx = Fx::new();
    // Nothing named `~` exists in the root: no home-directory expansion happens.
    assert!(matches!(fx.root.read_window(&p("~/.bashrc"), 0, 100), Err(FsError::NotFound { .. })));
    assert_eq!(fx.root.version(&p("~/.bashrc")).unwrap(), Version::Absent);
    fx.file("~/.bashrc", b"inside tilde");
    assert_eq!(fx.root.read_window(&p("~/.bashrc"), 0, 100).unwrap().data, b"inside tilde");
    assert_eq!(
        fx.root.read_window(&p("~user/x/.."), 0, 1).map(|_| ()).unwrap_err().path(),
        Some("~user")
    );
}

#[test]
fn p1_dotdot_inside_the_root_is_normalised() {
    let fx = Fx::new();
    fx.file("a.txt", b"top");
    fx.dir("sub");
    let path = p("sub/../a.txt");
    assert_eq!(path.as_str(), "a.txt");
    assert_eq!(fx.root.read_window(&path, 0, 10).unwrap().data, b"top");
}

#[test]
fn p2_sibling_with_shared_prefix_is_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    let evil = tmp.path().join("app-evil");
    fs::create_dir(&app).unwrap();
    fs::create_dir(&evil).unwrap();
    fs::write(evil.join("x"), SECRET).unwrap();
    let root = Root::open(&app).unwrap();
    assert_eq!(escape_reason("../app-evil/x"), PathEscapeReason::ParentEscape);
    assert_eq!(escape_reason(evil.join("x").to_str().unwrap()), PathEscapeReason::Absolute);
    // A name that merely starts with the sibling's name is just a missing file here.
    assert!(matches!(root.read_window(&p("app-evil/x"), 0, 10), Err(FsError::NotFound { .. })));
    std::os::unix::fs::symlink("../app-evil", app.join("evil")).unwrap();
    assert!(matches!(root.open_file(&p("evil/x")), Err(FsError::SymlinkRejected { .. })));
    assert!(root.walk(&WalkLimits::default()).unwrap().files.is_empty());
    assert_eq!(fs::read(evil.join("x")).unwrap(), SECRET);
}

#[test]
fn p8_malformed_paths_get_typed_errors() {
    for (input, reason) in [
        ("a\0b", PathEscapeReason::Nul),
        ("secret.txt\0.png", PathEscapeReason::Nul),
        ("", PathEscapeReason::Empty),
        (".", PathEscapeReason::Root),
    ] {
        assert_eq!(escape_reason(input), reason, "{input:?}");
        assert!(reason != PathEscapeReason::Root || !reason.is_malformed());
    }
    assert_eq!(escape_reason(&"x".repeat(256)), PathEscapeReason::ComponentTooLong);
    assert_eq!(
        escape_reason(&format!("d/{}", "x".repeat(256))),
        PathEscapeReason::ComponentTooLong
    );
    assert_eq!(escape_reason(&"a/".repeat(2049)), PathEscapeReason::TooLong);
    assert!(PathEscapeReason::Nul.is_malformed());
    assert!(PathEscapeReason::TooLong.is_malformed());
}

#[test]
fn p8_longest_names_work_end_to_end() {
    let fx = Fx::new();
    let name = "n".repeat(255);
    fx.file(&name, b"long");
    assert_eq!(fx.root.read_window(&p(&name), 0, 10).unwrap().data, b"long");
    assert_eq!(fx.root.walk(&WalkLimits::default()).unwrap().files, [name]);
}

#[test]
fn p8_odd_names_are_byte_exact() {
    let fx = Fx::new();
    let names = [
        "-rf",
        " x ",
        "a\nb",
        "*",
        "?",
        "a\\b",
        ":",
        "\u{1f980}.rs",
        "...",
        "é",
        "\u{202e}txt.exe",
    ];
    for (i, name) in names.iter().enumerate() {
        fx.file(name, format!("{i}").as_bytes());
    }
    for (i, name) in names.iter().enumerate() {
        let window = fx.root.read_window(&p(name), 0, 10).unwrap();
        assert_eq!(window.data, format!("{i}").as_bytes(), "{name:?}");
    }
    let mut expected: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    expected.sort();
    assert_eq!(fx.root.walk(&WalkLimits::default()).unwrap().files, expected);
}

#[test]
fn p8_nfc_and_nfd_are_distinct_files() {
    let fx = Fx::new();
    let nfc = "caf\u{e9}.txt";
    let nfd = "cafe\u{301}.txt";
    fx.file(nfc, b"nfc");
    fx.file(nfd, b"nfd");
    assert_eq!(fx.root.read_window(&p(nfc), 0, 10).unwrap().data, b"nfc");
    assert_eq!(fx.root.read_window(&p(nfd), 0, 10).unwrap().data, b"nfd");
    assert_ne!(fx.root.version(&p(nfc)).unwrap(), fx.root.version(&p(nfd)).unwrap());
    fx.root.write_atomic(&p(nfd), b"nfd2", None).unwrap();
    assert_eq!(fx.read(nfc), b"nfc");
    assert_eq!(fx.root.walk(&WalkLimits::default()).unwrap().files.len(), 2);
}

#[test]
fn p8_non_utf8_names_are_skipped_and_counted_by_walk() {
    let fx = Fx::new();
    fx.file("ok.txt", b"");
    fs::write(fx.ws.join(OsStr::from_bytes(b"bad\xff.txt")), b"").unwrap();
    let bad_dir = fx.ws.join(OsStr::from_bytes(b"dir\xfe"));
    fs::create_dir(&bad_dir).unwrap();
    fs::write(bad_dir.join("inner.txt"), b"").unwrap();
    let walk = fx.root.walk(&WalkLimits::default()).unwrap();
    assert_eq!(walk.files, ["ok.txt"]);
    assert_eq!(walk.skipped_non_utf8, 2);
    assert!(!walk.incomplete);
}

#[test]
fn errors_name_the_relative_path_not_the_host_path() {
    let fx = Fx::new();
    fx.symlink(fx.outside.join("secret.txt"), "leak");
    fx.dir("d");
    let host = fx.ws.to_str().unwrap().to_owned();
    let outside = fx.outside.to_str().unwrap().to_owned();
    let errors = [
        fx.root.read_window(&p("leak"), 0, 1).unwrap_err(),
        fx.root.read_window(&p("missing/x"), 0, 1).unwrap_err(),
        fx.root.read_window(&p("d"), 0, 1).unwrap_err(),
        fx.root.write_atomic(&p("leak"), b"x", None).unwrap_err(),
        WorkspacePath::parse("../outside").unwrap_err(),
    ];
    for err in errors {
        let message = err.to_string();
        assert!(!message.contains(&host) && !message.contains(&outside), "{message}");
        assert!(err.path().is_some(), "{message}");
    }
}
