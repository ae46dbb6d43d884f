//! Unit tests of `error`.

use super::*;

#[test]
fn wire_spelling_matches_serde() {
    for code in ErrorCode::ALL {
        let json = serde_json::to_value(code).unwrap();
        assert_eq!(json, serde_json::Value::String(code.as_str().to_owned()));
        assert!(!code.next_action().is_empty());
        assert!(!code.meaning().is_empty());
    }
}

#[test]
fn optional_fields_are_omitted() {
    let body = ErrorBody::new(ErrorCode::PathEscape, "nope");
    assert_eq!(serde_json::to_string(&body).unwrap(), r#"{"code":"PATH_ESCAPE","message":"nope"}"#);
}
