//! Unit tests of `enter`.

use super::*;

#[test]
fn seccomp_programs_build_for_both_network_policies() {
    for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
        let bpf = seccomp_programs(network);
        assert!(
            bpf.as_ref().is_ok_and(|p| p.len() == 2 && p.iter().all(|p| !p.is_empty())),
            "{network:?}: {bpf:?}"
        );
    }
    let restricted = seccomp_program(NetworkPolicy::Restricted).map(|p| p.len()).ok();
    let enabled = seccomp_program(NetworkPolicy::Enabled).map(|p| p.len()).ok();
    assert!(restricted > enabled, "the socket rules are missing: {restricted:?} {enabled:?}");
}
