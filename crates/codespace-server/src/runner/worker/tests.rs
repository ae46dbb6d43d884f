//! Unit tests of the worker role: which socket modes and groups an operator may set.

use super::{parse_group, parse_socket_mode};

#[test]
fn socket_modes_keep_the_owner_and_refuse_others() {
    assert_eq!(parse_socket_mode("0600"), Ok(0o600));
    assert_eq!(parse_socket_mode("660"), Ok(0o660));
    assert_eq!(parse_socket_mode("0o640"), Ok(0o640));
    for bad in ["0666", "0662", "0400", "1660", "abc", "0999", ""] {
        assert!(parse_socket_mode(bad).is_err(), "{bad}");
    }
}

#[test]
fn groups_are_numbers_or_names_in_the_group_database() {
    assert_eq!(parse_group("64010"), Ok(64010));
    assert_eq!(parse_group("root"), Ok(0));
    assert!(parse_group("no-such-group-here").is_err());
}
