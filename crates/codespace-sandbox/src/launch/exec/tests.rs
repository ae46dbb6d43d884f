//! Unit tests of `launch::exec`.

use super::*;

#[test]
fn not_found_names_only_host_dirs_missing_here() {
    let p = Program {
        name: "python3".into(),
        candidates: vec![CString::new("/x/python3").unwrap()],
        host_dirs: vec!["/".into(), "/nonexistent-codespace-dir".into()],
        links: Vec::new(),
    };
    let e = p.not_found();
    assert_eq!(e.errno, libc::ENOENT);
    assert!(e.message.contains("not found on PATH"), "{}", e.message);
    assert!(e.message.contains("/nonexistent-codespace-dir"), "{}", e.message);
    assert!(e.message.contains("extra_read_roots"), "{}", e.message);
    assert!(!e.message.contains(": /,"), "{}", e.message);
}

#[test]
fn not_found_names_a_hidden_symlink_target_and_its_prefix() {
    let p = Program {
        name: "python".into(),
        candidates: vec![CString::new("/ws/.venv/bin/python").unwrap()],
        host_dirs: vec!["/ws/.venv/bin".into()],
        links: vec![(
            "/ws/.venv/bin/python".into(),
            "/nonexistent-codespace-dir/py/bin/python3.12".into(),
        )],
    };
    let e = p.not_found();
    assert!(e.message.contains("/nonexistent-codespace-dir/py/bin/python3.12"), "{}", e.message);
    assert!(e.message.contains("add /nonexistent-codespace-dir/py to"), "{}", e.message);
}
