//! Unit tests of `types`.

use super::*;

#[test]
fn names_the_standard_signals() {
    assert_eq!(signal_name(15), Some("SIGTERM"));
    assert_eq!(signal_name(9), Some("SIGKILL"));
    assert_eq!(signal_name(libc::SIGSYS), Some("SIGSYS"));
    assert_eq!(signal_name(0), None);
    assert_eq!(signal_name(libc::SIGRTMIN()), None);
    assert_eq!(signal_info(2), SignalInfo { number: 2, name: Some("SIGINT".to_owned()) });
}
