//! The `traceparent` parser against the W3C examples and the values it must refuse.

use super::parse;

#[test]
fn a_valid_traceparent_is_read_and_invalid_ones_are_ignored() {
    let t = parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").expect("valid");
    assert_eq!(t.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(t.parent_id, "00f067aa0ba902b7");
    assert!(t.sampled);
    assert!(
        parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
            .is_some_and(|t| !t.sampled)
    );
    // A later version may append fields.
    assert!(parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra").is_some());
    for bad in [
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n\u{1b}[31m",
    ] {
        assert_eq!(parse(bad), None, "{bad:?}");
    }
}
