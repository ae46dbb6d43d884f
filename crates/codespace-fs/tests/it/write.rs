//! The write side: atomic replace (P6 hard links), modes and owners, create_dirs,
//! remove_file and metadata.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use codespace_fs::{FileKind, FsError, WalkLimits};

use crate::support::{Fx, SECRET, assert_symlink_rejected, cannot_run, p};

fn mode_of(path: &std::path::Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// Names in `dir` that look like our temp files (none may be left behind).
fn temp_leftovers(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".codespace-tmp"))
        .collect()
}

#[test]
fn write_atomic_creates_and_replaces() {
    let fx = Fx::new();
    fx.root.write_atomic(&p("new.txt"), b"first", None).unwrap();
    assert_eq!(fx.read("new.txt"), b"first");
    assert_eq!(mode_of(&fx.ws.join("new.txt")) & 0o111, 0, "a new file is not executable");
    fx.dir("sub");
    fx.root.write_atomic(&p("sub/new.txt"), b"nested", None).unwrap();
    let ino = fs::metadata(fx.ws.join("new.txt")).unwrap().ino();
    fx.root.write_atomic(&p("new.txt"), b"second, longer", None).unwrap();
    assert_eq!(fx.read("new.txt"), b"second, longer");
    assert_ne!(
        fs::metadata(fx.ws.join("new.txt")).unwrap().ino(),
        ino,
        "replaced, not rewritten in place"
    );
    fx.root.write_atomic(&p("new.txt"), b"", None).unwrap();
    assert_eq!(fx.read("new.txt"), b"");
    assert!(temp_leftovers(&fx.ws).is_empty());
    assert!(temp_leftovers(&fx.ws.join("sub")).is_empty());
    assert_eq!(fx.root.walk(&WalkLimits::default()).unwrap().files, ["new.txt", "sub/new.txt"]);
}

#[test]
fn write_atomic_modes() {
    let fx = Fx::new();
    fx.root.write_atomic(&p("explicit"), b"#!/bin/sh\n", Some(0o755)).unwrap();
    assert_eq!(mode_of(&fx.ws.join("explicit")), 0o755);
    // Exactly as given, not reduced by the umask.
    fx.root.write_atomic(&p("open"), b"x", Some(0o666)).unwrap();
    assert_eq!(mode_of(&fx.ws.join("open")), 0o666);

    let kept = fx.file("kept", b"old");
    fs::set_permissions(&kept, fs::Permissions::from_mode(0o640)).unwrap();
    fx.root.write_atomic(&p("kept"), b"new", None).unwrap();
    assert_eq!(mode_of(&kept), 0o640);

    let suid = fx.file("suid", b"old");
    fs::set_permissions(&suid, fs::Permissions::from_mode(0o4755)).unwrap();
    fx.root.write_atomic(&p("suid"), b"new", None).unwrap();
    assert_eq!(mode_of(&suid), 0o755, "setuid is not carried over to new content");

    fx.root.write_atomic(&p("kept"), b"newer", Some(0o600)).unwrap();
    assert_eq!(mode_of(&kept), 0o600);
}

#[test]
fn write_atomic_keeps_the_owner_when_privileged() {
    let fx = Fx::new();
    let path = fx.file("owned", b"old");
    if let Err(e) = std::os::unix::fs::chown(&path, Some(4321), Some(4321)) {
        cannot_run("write_atomic_keeps_the_owner_when_privileged", &format!("cannot chown: {e}"));
        return;
    }
    fx.root.write_atomic(&p("owned"), b"new", None).unwrap();
    let meta = fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (4321, 4321));
    // An explicit setgid mode survives the chown that keeps the owner.
    fx.root.write_atomic(&p("owned"), b"newer", Some(0o2755)).unwrap();
    let meta = fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid(), mode_of(&path)), (4321, 4321, 0o2755));
}

#[test]
fn p6_hard_link_to_outside_is_replaced_not_written_through() {
    let fx = Fx::new();
    let outside = fx.outside.join("bashrc");
    fs::write(&outside, SECRET).unwrap();
    fs::hard_link(&outside, fx.ws.join("notes.txt")).unwrap();
    assert_eq!(fs::metadata(&outside).unwrap().nlink(), 2);
    assert_eq!(fx.root.metadata(&p("notes.txt")).unwrap().unwrap().nlink, 2);

    fx.root.write_atomic(&p("notes.txt"), b"patched", None).unwrap();

    assert_eq!(fs::read(&outside).unwrap(), SECRET);
    assert_eq!(fs::metadata(&outside).unwrap().nlink(), 1);
    assert_eq!(fx.read("notes.txt"), b"patched");
    assert_eq!(fx.root.metadata(&p("notes.txt")).unwrap().unwrap().nlink, 1);
}

#[test]
fn p6_remove_of_a_hard_link_leaves_the_outside_file() {
    let fx = Fx::new();
    let outside = fx.outside.join("bashrc");
    fs::write(&outside, SECRET).unwrap();
    fs::hard_link(&outside, fx.ws.join("notes.txt")).unwrap();
    fx.root.remove_file(&p("notes.txt")).unwrap();
    assert_eq!(fs::read(&outside).unwrap(), SECRET);
}

#[test]
fn write_atomic_refusals() {
    let fx = Fx::new();
    fx.file("file.txt", b"keep");
    fx.file("dir/inner", b"");
    fx.symlink("file.txt", "link");
    let before = fx.outside_snapshot();
    assert!(matches!(
        fx.root.write_atomic(&p("nodir/x"), b"x", None),
        Err(FsError::NotFound { .. })
    ));
    assert!(matches!(
        fx.root.write_atomic(&p("file.txt/x"), b"x", None),
        Err(FsError::NotDirectory { .. })
    ));
    assert!(matches!(
        fx.root.write_atomic(&p("dir"), b"x", None),
        Err(FsError::IsDirectory { .. })
    ));
    assert_symlink_rejected(fx.root.write_atomic(&p("link"), b"x", None));
    assert_eq!(fs::read_link(fx.ws.join("link")).unwrap(), std::path::Path::new("file.txt"));
    assert_eq!(fx.read("file.txt"), b"keep");
    assert!(temp_leftovers(&fx.ws).is_empty());
    assert_eq!(fx.outside_snapshot(), before);
}

#[test]
fn create_dirs_nested_idempotent_and_refusing_links() {
    let fx = Fx::new();
    fx.root.create_dirs(&p("a/b/c")).unwrap();
    assert!(fx.ws.join("a/b/c").is_dir());
    fx.root.create_dirs(&p("a/b/c")).unwrap();
    fx.root.create_dirs(&p("a/b/d")).unwrap();
    fx.root.write_atomic(&p("a/b/c/f.txt"), b"deep", None).unwrap();
    assert_eq!(fx.read("a/b/c/f.txt"), b"deep");

    let before = fx.outside_snapshot();
    fx.symlink(&fx.outside, "out");
    fx.symlink("a", "in");
    assert_symlink_rejected(fx.root.create_dirs(&p("out/x")));
    assert_symlink_rejected(fx.root.create_dirs(&p("out")));
    assert_symlink_rejected(fx.root.create_dirs(&p("in/b/new")));
    assert!(!fx.ws.join("a/b/new").exists());
    fx.file("plain", b"");
    assert!(matches!(fx.root.create_dirs(&p("plain/x")), Err(FsError::NotDirectory { .. })));
    assert!(matches!(fx.root.create_dirs(&p("plain")), Err(FsError::NotDirectory { .. })));
    assert_eq!(fx.outside_snapshot(), before);
}

#[test]
fn remove_file_and_its_refusals() {
    let fx = Fx::new();
    fx.file("gone.txt", b"");
    fx.file("dir/keep.txt", b"");
    fx.symlink("dir/keep.txt", "link");
    fx.symlink(&fx.outside, "out");
    fx.root.remove_file(&p("gone.txt")).unwrap();
    assert!(!fx.ws.join("gone.txt").exists());
    assert!(matches!(fx.root.remove_file(&p("gone.txt")), Err(FsError::NotFound { .. })));
    assert!(matches!(fx.root.remove_file(&p("nodir/x")), Err(FsError::NotFound { .. })));
    assert!(matches!(fx.root.remove_file(&p("dir")), Err(FsError::IsDirectory { .. })));
    assert_symlink_rejected(fx.root.remove_file(&p("link")));
    assert!(fs::symlink_metadata(fx.ws.join("link")).is_ok());
    assert_symlink_rejected(fx.root.remove_file(&p("out/secret.txt")));
    assert_eq!(fs::read(fx.outside.join("secret.txt")).unwrap(), SECRET);
    fx.root.remove_file(&p("dir/keep.txt")).unwrap();
}

#[test]
fn metadata_is_no_follow_and_matches_lstat() {
    let fx = Fx::new();
    let file = fx.file("f.txt", b"12345");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    fx.dir("d");
    fx.symlink(&fx.outside, "out");
    let meta = fx.root.metadata(&p("f.txt")).unwrap().unwrap();
    let std_meta = fs::symlink_metadata(&file).unwrap();
    assert_eq!(meta.kind, FileKind::Regular);
    assert_eq!((meta.size, meta.mode, meta.nlink), (5, 0o640, 1));
    assert_eq!((meta.dev, meta.ino), (std_meta.dev(), std_meta.ino()));
    assert_eq!(meta.mtime, std_meta.modified().unwrap());
    assert_eq!(fx.root.metadata(&p("d")).unwrap().unwrap().kind, FileKind::Directory);
    assert_eq!(fx.root.metadata(&p("out")).unwrap().unwrap().kind, FileKind::Symlink);
    assert_eq!(fx.root.metadata(&p("missing")).unwrap(), None);
    assert_eq!(fx.root.metadata(&p("missing/deeper")).unwrap(), None);
    assert_symlink_rejected(fx.root.metadata(&p("out/secret.txt")));
    assert!(matches!(fx.root.metadata(&p("f.txt/x")), Err(FsError::NotDirectory { .. })));
    // A replaced file shows a new identity (what watcher-backed caches key on).
    fx.root.write_atomic(&p("f.txt"), b"12345", None).unwrap();
    assert_ne!(fx.root.metadata(&p("f.txt")).unwrap().unwrap().ino, meta.ino);
}

/// Recovery's sweep removes the temp files of writers that are gone and keeps a live
/// writer's (another process may be writing beside the interrupted patch).
#[test]
fn stale_temp_files_of_live_writers_are_kept() {
    let fx = Fx::new();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let live = std::process::id();
    for name in [
        format!(".codespace-tmp.{live}.0.0"),
        format!(".codespace-tmp.{dead}.0.0"),
        ".codespace-tmp.junk".to_owned(),
    ] {
        fs::write(fx.ws.join(name), b"partial").unwrap();
    }
    assert_eq!(fx.root.remove_stale_temp_files(&p("a.txt")).unwrap(), 2);
    assert_eq!(temp_leftovers(&fx.ws), [format!(".codespace-tmp.{live}.0.0")]);
}
