//! P9: the bounded no-follow walk on hostile trees, and each cap.

use std::fs;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use codespace_fs::{Cancel, FsError, WalkLimits};
use rustix::fs::{CWD, FileType, Mode};

use crate::support::Fx;

fn walk(fx: &Fx, limits: WalkLimits) -> codespace_fs::Walk {
    fx.root.walk(&limits).unwrap()
}

fn all(fx: &Fx) -> codespace_fs::Walk {
    walk(fx, WalkLimits::default())
}

#[test]
fn defaults_are_the_pinned_caps() {
    let limits = WalkLimits::default();
    assert_eq!((limits.max_depth, limits.max_dirs, limits.max_entries), (64, 10_000, 50_000));
    assert_eq!(limits.deadline, None);
}

#[test]
fn lists_regular_files_sorted_by_bytes_hidden_included() {
    let fx = Fx::new();
    for path in
        ["b.txt", "a/z.txt", "a.txt", ".env", ".git/config", "A.txt", "a/.hidden/x", "é.txt"]
    {
        fx.file(path, b"");
    }
    fx.dir("empty/dir");
    let got = all(&fx);
    // Byte order: '.' (0x2e) < '/' (0x2f) < 'A' < 'a' < 0xc3 (é).
    assert_eq!(
        got.files,
        [".env", ".git/config", "A.txt", "a.txt", "a/.hidden/x", "a/z.txt", "b.txt", "é.txt"]
    );
    assert!(!got.incomplete);
    assert_eq!(got.skipped_non_utf8, 0);
}

#[test]
fn p9_loop_and_root_links_are_not_followed() {
    let fx = Fx::new();
    fx.file("f.txt", b"");
    fx.file("sub/g.txt", b"");
    fx.symlink(".", "a");
    fx.symlink("..", "sub/up");
    fx.symlink("/", "slash");
    fx.symlink(&fx.outside, "out");
    let got = all(&fx);
    assert_eq!(got.files, ["f.txt", "sub/g.txt"]);
    assert!(!got.incomplete);
}

#[test]
fn p9_special_entries_are_not_listed() {
    let fx = Fx::new();
    fx.file("f.txt", b"");
    rustix::fs::mknodat(CWD, fx.ws.join("fifo"), FileType::Fifo, Mode::from_raw_mode(0o644), 0)
        .unwrap();
    let _sock = UnixListener::bind(fx.ws.join("sock")).unwrap();
    fx.symlink("f.txt", "link");
    assert_eq!(all(&fx).files, ["f.txt"]);
}

#[test]
fn p9_entry_cap_marks_incomplete_exactly_past_the_cap() {
    let fx = Fx::new();
    for i in 0..10 {
        fx.file(&format!("f{i}"), b"");
    }
    let exact = walk(&fx, WalkLimits { max_entries: 10, ..WalkLimits::default() });
    assert_eq!(exact.files.len(), 10);
    assert!(!exact.incomplete);
    let capped = walk(&fx, WalkLimits { max_entries: 4, ..WalkLimits::default() });
    assert_eq!(capped.files.len(), 4);
    assert!(capped.incomplete);
    // Entries of any type count, symlinks included.
    fx.symlink("f0", "link");
    let with_link = walk(&fx, WalkLimits { max_entries: 10, ..WalkLimits::default() });
    assert!(with_link.incomplete);
}

#[test]
fn p9_dir_cap_marks_incomplete() {
    let fx = Fx::new();
    for d in ["d1", "d2", "d3"] {
        fx.file(&format!("{d}/x"), b"");
    }
    fx.file("top", b"");
    // The root counts as one directory.
    let capped = walk(&fx, WalkLimits { max_dirs: 2, ..WalkLimits::default() });
    assert!(capped.incomplete);
    assert_eq!(capped.files.len(), 2, "{:?}", capped.files); // `top` and one dir's `x`
    assert!(capped.files.contains(&"top".to_owned()));
    let exact = walk(&fx, WalkLimits { max_dirs: 4, ..WalkLimits::default() });
    assert!(!exact.incomplete);
    assert_eq!(exact.files.len(), 4);
    let none = walk(&fx, WalkLimits { max_dirs: 0, ..WalkLimits::default() });
    assert!(none.incomplete && none.files.is_empty());
}

#[test]
fn p9_depth_cap_marks_incomplete() {
    let fx = Fx::new();
    fx.file("l0.txt", b"");
    fx.file("a/l1.txt", b"");
    fx.file("a/b/l2.txt", b"");
    let shallow = walk(&fx, WalkLimits { max_depth: 1, ..WalkLimits::default() });
    assert_eq!(shallow.files, ["a/l1.txt", "l0.txt"]);
    assert!(shallow.incomplete);
    let root_only = walk(&fx, WalkLimits { max_depth: 0, ..WalkLimits::default() });
    assert_eq!(root_only.files, ["l0.txt"]);
    assert!(root_only.incomplete);
    let exact = walk(&fx, WalkLimits { max_depth: 2, ..WalkLimits::default() });
    assert_eq!(exact.files.len(), 3);
    assert!(!exact.incomplete);
}

#[test]
fn p9_default_depth_cap_on_a_70_level_tree() {
    let fx = Fx::new();
    let deep: Vec<&str> = vec!["d"; 70];
    fx.file(&format!("{}/bottom.txt", deep.join("/")), b"");
    fx.file(&format!("{}/at64.txt", deep[..64].join("/")), b"");
    let got = all(&fx);
    assert!(got.incomplete);
    assert_eq!(got.files, [format!("{}/at64.txt", deep[..64].join("/"))]);
}

#[test]
fn p9_deadline_marks_incomplete() {
    let fx = Fx::new();
    for i in 0..50 {
        fx.file(&format!("d{}/f{i}", i % 5), b"");
    }
    let past = walk(&fx, WalkLimits { deadline: Some(Instant::now()), ..WalkLimits::default() });
    assert!(past.incomplete);
    assert!(past.files.is_empty());
    let future = Instant::now() + Duration::from_secs(60);
    let done = walk(&fx, WalkLimits { deadline: Some(future), ..WalkLimits::default() });
    assert!(!done.incomplete);
    assert_eq!(done.files.len(), 50);
}

#[test]
fn p9_a_raised_cancel_flag_stops_the_walk() {
    let fx = Fx::new();
    for i in 0..50 {
        fx.file(&format!("d{}/f{i}", i % 5), b"");
    }
    let cancel = Cancel::new();
    let limits = WalkLimits { cancel: cancel.clone(), ..WalkLimits::default() };
    assert_eq!(walk(&fx, limits.clone()).files.len(), 50, "not raised: the whole tree");
    cancel.cancel();
    let stopped = walk(&fx, limits);
    assert!(stopped.incomplete);
    assert!(stopped.files.is_empty());
}

#[test]
fn p9_many_entries_hit_the_default_entry_cap() {
    let fx = Fx::new();
    let dir = fx.dir("many");
    for i in 0..50_010 {
        fs::File::create(dir.join(format!("{i:05}"))).unwrap();
    }
    let got = all(&fx);
    assert!(got.incomplete);
    // The `many` directory entry itself counts too.
    assert_eq!(got.files.len(), 49_999);
}

#[test]
fn deleted_root_is_an_error_not_an_empty_listing() {
    let fx = Fx::new();
    fs::remove_file(fx.outside.join("secret.txt")).unwrap();
    fs::remove_dir(&fx.ws).unwrap();
    assert!(matches!(fx.root.walk(&WalkLimits::default()), Err(FsError::RootUnavailable { .. })));
}
