//! Unit tests of `policy`.

use super::*;

fn policy() -> SandboxPolicy {
    SandboxPolicy {
        read_roots: vec!["/opt/tool chain".into()],
        writable_roots: vec!["/w/a b".into(), "/tmp/x\ny".into()],
        masked: vec!["/state".into()],
        network: NetworkPolicy::Enabled,
        max_pids: 1024,
        workdir: Some("/w/a b".into()),
    }
}

#[test]
fn check_accepts_a_sound_policy() {
    assert_eq!(policy().check(), Ok(()));
    let bare = SandboxPolicy {
        read_roots: vec![],
        writable_roots: vec![],
        masked: vec![],
        network: NetworkPolicy::Restricted,
        max_pids: MIN_MAX_PIDS,
        workdir: None,
    };
    assert_eq!(bare.check(), Ok(()));
    let read_workdir = SandboxPolicy { workdir: Some("/opt/tool chain".into()), ..policy() };
    assert_eq!(read_workdir.check(), Ok(()));
}

#[test]
fn check_refuses_malformed() {
    let refused = |p: SandboxPolicy| p.check().is_err();
    assert!(refused(SandboxPolicy { max_pids: MIN_MAX_PIDS - 1, ..policy() }));
    assert!(refused(SandboxPolicy { max_pids: MAX_MAX_PIDS + 1, ..policy() }));
    assert!(refused(SandboxPolicy { read_roots: vec!["rel".into()], ..policy() }));
    assert!(refused(SandboxPolicy { masked: vec!["".into()], ..policy() }));
    assert!(refused(SandboxPolicy { workdir: Some("/b".into()), ..policy() }));
    let many = vec![PathBuf::from("/a"); MAX_PATHS + 1];
    assert!(refused(SandboxPolicy { masked: many, ..policy() }));
}
