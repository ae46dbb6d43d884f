//! P3 (symlinks out, chains, inside links) and P5 (magic links): refused everywhere.

use std::fs;
use std::os::fd::AsRawFd;

use codespace_fs::{FileKind, FsError, WalkLimits};

use crate::support::{Fx, SECRET, assert_symlink_rejected, p};

/// Every read-side entry point refuses `path`, and nothing outside changed.
fn assert_all_reads_refused(fx: &Fx, path: &str) {
    let path = p(path);
    assert_symlink_rejected(fx.root.open_file(&path));
    assert_symlink_rejected(fx.root.read_window(&path, 0, 1 << 20));
    // A link is not "absent": a version check must not be satisfiable through it.
    assert_symlink_rejected(fx.root.version(&path));
}

#[test]
fn p3_leaf_symlink_out_is_refused() {
    let fx = Fx::new();
    let before = fx.outside_snapshot();
    fx.symlink(fx.outside.join("secret.txt"), "leak");
    fx.symlink("../outside/secret.txt", "leak_rel");
    fx.symlink("/etc/passwd", "passwd");
    for leaf in ["leak", "leak_rel", "passwd"] {
        assert_all_reads_refused(&fx, leaf);
        assert_symlink_rejected(fx.root.write_atomic(&p(leaf), b"pwned", None));
        assert_symlink_rejected(fx.root.remove_file(&p(leaf)));
        assert_eq!(fx.root.metadata(&p(leaf)).unwrap().unwrap().kind, FileKind::Symlink);
    }
    assert_eq!(fs::read_link(fx.ws.join("leak")).unwrap(), fx.outside.join("secret.txt"));
    assert_eq!(fx.outside_snapshot(), before);
}

#[test]
fn p3_ancestor_symlink_out_is_refused_for_reads_and_writes() {
    let fx = Fx::new();
    let before = fx.outside_snapshot();
    fx.symlink(&fx.outside, "src");
    fx.symlink("../outside", "src_rel");
    fx.symlink("/etc", "etc");
    for dir in ["src", "src_rel"] {
        assert_all_reads_refused(&fx, &format!("{dir}/secret.txt"));
        assert_symlink_rejected(fx.root.write_atomic(&p(&format!("{dir}/x")), b"pwned", None));
        assert_symlink_rejected(fx.root.write_atomic(
            &p(&format!("{dir}/secret.txt")),
            b"pwned",
            None,
        ));
        assert_symlink_rejected(fx.root.create_dirs(&p(&format!("{dir}/newdir"))));
        assert_symlink_rejected(fx.root.remove_file(&p(&format!("{dir}/secret.txt"))));
        assert_symlink_rejected(fx.root.metadata(&p(&format!("{dir}/secret.txt"))));
    }
    assert_all_reads_refused(&fx, "etc/passwd");
    assert_eq!(fx.outside_snapshot(), before);
}

#[test]
fn p3_three_hop_chain_is_refused() {
    let fx = Fx::new();
    fx.symlink("b", "a");
    fx.symlink("c", "b");
    fx.symlink(fx.outside.join("secret.txt"), "c");
    fx.symlink("y", "x");
    fx.symlink("z", "y");
    fx.symlink(&fx.outside, "z");
    let before = fx.outside_snapshot();
    for path in ["a", "b", "c", "x/secret.txt", "y/secret.txt"] {
        assert_all_reads_refused(&fx, path);
    }
    assert_symlink_rejected(fx.root.write_atomic(&p("a"), b"pwned", None));
    assert_symlink_rejected(fx.root.write_atomic(&p("x/new"), b"pwned", None));
    assert_eq!(fx.outside_snapshot(), before);
}

#[test]
fn p3_symlinks_pointing_inside_are_still_refused() {
    let fx = Fx::new();
    fx.file("real/file.txt", b"inside");
    fx.symlink("real/file.txt", "alias");
    fx.symlink("real", "dir_alias");
    fx.symlink("missing", "dangling");
    assert_all_reads_refused(&fx, "alias");
    assert_all_reads_refused(&fx, "dir_alias/file.txt");
    assert_all_reads_refused(&fx, "dangling");
    // The real path still works.
    assert_eq!(fx.root.read_window(&p("real/file.txt"), 0, 100).unwrap().data, b"inside");
    assert_symlink_rejected(fx.root.write_atomic(&p("dangling"), b"x", None));
    assert!(!fx.ws.join("missing").exists());
}

#[test]
fn p3_walk_does_not_follow_or_list_links() {
    let fx = Fx::new();
    fx.file("real.txt", b"");
    fx.symlink(&fx.outside, "out_dir");
    fx.symlink(fx.outside.join("secret.txt"), "out_file");
    fx.symlink("real.txt", "in_file");
    let walk = fx.root.walk(&WalkLimits::default()).unwrap();
    assert_eq!(walk.files, ["real.txt"]);
    assert!(!walk.incomplete);
}

#[test]
fn p5_magic_links_are_refused() {
    let fx = Fx::new();
    let outside_file = fs::File::open(fx.outside.join("secret.txt")).unwrap();
    let fd_link = format!("/proc/self/fd/{}", outside_file.as_raw_fd());
    fx.symlink("/proc/self/root/etc/passwd", "passwd");
    fx.symlink("/proc/self/cwd", "cwd");
    fx.symlink(&fd_link, "fd");
    fx.symlink("/proc/self/root", "proc_root");
    for path in ["passwd", "cwd/Cargo.toml", "fd", "proc_root/etc/passwd"] {
        assert_all_reads_refused(&fx, path);
    }
    assert_symlink_rejected(fx.root.write_atomic(&p("fd"), b"pwned", None));
    assert_symlink_rejected(fx.root.write_atomic(&p("proc_root/tmp/pwned"), b"pwned", None));
    drop(outside_file);
    assert_eq!(fs::read(fx.outside.join("secret.txt")).unwrap(), SECRET);
}

#[test]
fn p3_symlinked_root_is_the_trust_anchor() {
    let fx = Fx::new();
    fx.file("f.txt", b"via link");
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("ws-link");
    std::os::unix::fs::symlink(&fx.ws, &link).unwrap();
    let root = codespace_fs::Root::open(&link).unwrap();
    assert_eq!(root.path(), fs::canonicalize(&fx.ws).unwrap());
    assert_eq!(root.read_window(&p("f.txt"), 0, 100).unwrap().data, b"via link");
    assert!(matches!(root.read_window(&p("nope"), 0, 1), Err(FsError::NotFound { .. })));
}
