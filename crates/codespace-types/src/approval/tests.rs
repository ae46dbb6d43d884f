//! Unit tests of `approval`.

use super::*;

#[test]
fn four_states_are_active() {
    let active: Vec<_> = ApprovalState::ALL.into_iter().filter(|s| s.is_active()).collect();
    assert_eq!(active.len(), 4);
}
