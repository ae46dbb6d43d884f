//! Unit tests of `observed`.

use super::*;
use ObservedChange::{Created, Modified, Removed};

#[test]
fn coalescing_keeps_what_an_agent_needs_to_know() {
    assert_eq!(Created.then(Modified), Created);
    assert_eq!(Created.then(Removed), Removed);
    assert_eq!(Removed.then(Created), Modified);
    assert_eq!(Modified.then(Removed), Removed);
    assert_eq!(Modified.then(Modified), Modified);
}
