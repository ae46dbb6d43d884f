//! Unit tests of `event`: how notify's events become the watcher's kinds.

use std::path::{Path, PathBuf};

use notify::event::{CreateKind, DataChange, Flag, ModifyKind, RemoveKind, RenameMode};

use super::*;

fn ev(kind: notify::EventKind, paths: &[&str]) -> notify::Result<notify::Event> {
    let mut e = notify::Event::new(kind);
    for p in paths {
        e = e.add_path(PathBuf::from(p));
    }
    Ok(e)
}

fn kinds(raw: notify::Result<notify::Event>) -> Vec<EventKind> {
    classify(Path::new("/ws"), &raw).kinds
}

#[test]
fn paths_are_relative_and_outside_ones_are_dropped() {
    let created = kinds(ev(
        notify::EventKind::Create(CreateKind::File),
        &["/ws/a/b.txt", "/other/x", "/wsx/y"],
    ));
    assert_eq!(created, vec![EventKind::Create { path: "a/b.txt".into() }]);
    let removed = kinds(ev(notify::EventKind::Remove(RemoveKind::File), &["/ws/a/../b"]));
    assert_eq!(removed, vec![]);
    let modified =
        kinds(ev(notify::EventKind::Modify(ModifyKind::Data(DataChange::Any)), &["/ws/m"]));
    assert_eq!(modified, vec![EventKind::Modify { path: "m".into() }]);
    assert_eq!(
        kinds(ev(notify::EventKind::Access(notify::event::AccessKind::Any), &["/ws/m"])),
        vec![]
    );
}

#[test]
fn renames_map_to_rename_remove_or_create() {
    let name = |mode| notify::EventKind::Modify(ModifyKind::Name(mode));
    assert_eq!(
        kinds(ev(name(RenameMode::Both), &["/ws/a", "/ws/b"])),
        vec![EventKind::Rename { from: "a".into(), to: "b".into() }]
    );
    assert_eq!(
        kinds(ev(name(RenameMode::Both), &["/ws/a", "/out/b"])),
        vec![EventKind::Remove { path: "a".into() }]
    );
    assert_eq!(
        kinds(ev(name(RenameMode::Both), &["/out/a", "/ws/b"])),
        vec![EventKind::Create { path: "b".into() }]
    );
    assert_eq!(
        kinds(ev(name(RenameMode::From), &["/ws/a"])),
        vec![EventKind::Remove { path: "a".into() }]
    );
    assert_eq!(
        kinds(ev(name(RenameMode::To), &["/ws/b"])),
        vec![EventKind::Create { path: "b".into() }]
    );
    assert_eq!(classify(Path::new("/ws"), &ev(name(RenameMode::To), &["/ws/b"])).arrived, ["b"]);
}

#[test]
fn what_cannot_be_vouched_for_is_a_resync() {
    let rescan = notify::Event::new(notify::EventKind::Other).set_flag(Flag::Rescan);
    assert_eq!(kinds(Ok(rescan)), vec![EventKind::ResyncRequired]);
    assert_eq!(kinds(ev(notify::EventKind::Other, &["/ws/a"])), vec![EventKind::ResyncRequired]);
    assert_eq!(kinds(ev(notify::EventKind::Any, &[])), vec![EventKind::ResyncRequired]);
    assert_eq!(kinds(Err(notify::Error::generic("boom"))), vec![EventKind::ResyncRequired]);
    let root =
        classify(Path::new("/ws"), &ev(notify::EventKind::Remove(RemoveKind::Folder), &["/ws"]));
    assert_eq!(root.kinds, vec![EventKind::ResyncRequired]);
    assert!(root.root_gone);
    use std::os::unix::ffi::OsStrExt;
    let bad = PathBuf::from(std::ffi::OsStr::from_bytes(b"/ws/\xff"));
    let raw = Ok(notify::Event::new(notify::EventKind::Create(CreateKind::File)).add_path(bad));
    assert_eq!(kinds(raw), vec![EventKind::ResyncRequired]);
}

#[test]
fn cookies_are_seen_but_never_emitted() {
    let c = classify(
        Path::new("/ws"),
        &ev(
            notify::EventKind::Create(CreateKind::File),
            &["/ws/.codespace-cookie-1-2-3", "/ws/d/.codespace-cookie-x"],
        ),
    );
    assert_eq!(c.cookies, vec![".codespace-cookie-1-2-3".to_owned()]);
    // Only at the root is the name the watcher's own.
    assert_eq!(c.kinds, vec![EventKind::Create { path: "d/.codespace-cookie-x".into() }]);
    assert!(
        kinds(ev(notify::EventKind::Remove(RemoveKind::File), &["/ws/.codespace-cookie-1"]))
            .is_empty()
    );
}
