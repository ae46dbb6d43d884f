//! Unit tests of `external`.

use super::*;

#[test]
fn check_refuses_relative_paths() {
    let mut p = ExternalPolicy {
        read_roots: vec!["/opt/tools".into()],
        writable_roots: vec!["/work".into()],
        network: NetworkPolicy::Restricted,
        landlock: true,
        seccomp: true,
    };
    assert_eq!(p.check(), Ok(()));
    p.writable_roots.push("rel".into());
    assert!(p.check().unwrap_err().contains("writable path rel"));
}
