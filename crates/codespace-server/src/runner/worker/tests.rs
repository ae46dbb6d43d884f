//! Unit tests of the worker role: which socket modes an operator may set.

use super::parse_socket_mode;

#[test]
fn socket_modes_keep_the_owner_and_refuse_others() {
    assert_eq!(parse_socket_mode("0600"), Ok(0o600));
    assert_eq!(parse_socket_mode("660"), Ok(0o660));
    assert_eq!(parse_socket_mode("0o640"), Ok(0o640));
    for bad in ["0666", "0662", "0400", "1660", "abc", "0999", ""] {
        assert!(parse_socket_mode(bad).is_err(), "{bad}");
    }
}
