//! Unit tests of `launch::status`.

use super::*;

#[test]
fn status_round_trips_and_refuses_short_or_unknown_messages() {
    for ended in [Ended::Exited(0), Ended::Exited(127), Ended::Signaled(9)] {
        assert_eq!(Ended::decode(&ended.encode()), Some(ended));
    }
    assert_eq!(Ended::decode(&Ended::Exited(3).encode()[..4]), None);
    assert_eq!(Ended::decode(b"?\0\0\0\0"), None);
    assert_eq!(Ended::decode(b""), None);
}
