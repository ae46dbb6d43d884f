//! Unit tests of `frame`.

use super::*;

fn verdict(bytes: &[u8]) -> Verdict {
    match parse(bytes) {
        Ok(value) => check(value),
        Err(answer) => Verdict::Answer(answer),
    }
}

fn answer(bytes: &[u8]) -> Value {
    match verdict(bytes) {
        Verdict::Answer(v) => v,
        Verdict::Forward(_) => panic!("forwarded: {}", String::from_utf8_lossy(bytes)),
        Verdict::Drop => panic!("dropped: {}", String::from_utf8_lossy(bytes)),
    }
}

#[test]
fn malformed_input_gets_the_json_rpc_code() {
    for (bytes, code) in [
            (&b"{not json"[..], PARSE_ERROR),
            (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}", PARSE_ERROR),
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}"#, PARSE_ERROR),
            (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, INVALID_REQUEST),
            (b"42", INVALID_REQUEST),
            (
                br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":"x"}}"#,
                INVALID_PARAMS,
            ),
        ] {
            let reply = answer(bytes);
            assert_eq!(reply["error"]["code"], code, "{}: {reply}", String::from_utf8_lossy(bytes));
        }
    let reply = answer(
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":[1]}}"#,
        );
    assert_eq!(reply["id"], 3);
}

#[test]
fn well_formed_messages_pass() {
    for bytes in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{}}}"#,
        ] {
            assert!(matches!(verdict(bytes), Verdict::Forward(_)), "{}", String::from_utf8_lossy(bytes));
        }
}

#[test]
fn only_initialize_ping_and_inline_requests_open_a_session() {
    assert!(allowed_before_initialize(&json!({"method": "initialize", "id": 1})));
    assert!(allowed_before_initialize(&json!({"method": "ping", "id": 1})));
    let inline = json!({"method": "tools/list", "id": 1,
            "params": {"_meta": {INLINE_VERSION_KEY: "2026-07-28"}}});
    assert!(allowed_before_initialize(&inline));
    let early = json!({"jsonrpc": "2.0", "method": "tools/list", "id": 7});
    assert!(!allowed_before_initialize(&early));
    assert_eq!(not_initialized(&early).unwrap()["error"]["code"], INVALID_REQUEST);
    assert!(not_initialized(&json!({"method": "notifications/initialized"})).is_none());
}

#[test]
fn a_misshapen_frame_is_invalid_request_with_a_null_id() {
    for bytes in [
        &b"[]"[..],
        br#""ping""#,
        b"null",
        br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
    ] {
        let reply = answer(bytes);
        assert_eq!(reply["error"]["code"], INVALID_REQUEST, "{}", String::from_utf8_lossy(bytes));
        assert_eq!(reply["id"], Value::Null, "{}", String::from_utf8_lossy(bytes));
    }
    // A response with an id no request can have is dropped, never answered.
    let response = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
    assert!(matches!(verdict(response), Verdict::Drop));
}

#[test]
fn a_standard_method_whose_params_do_not_fit_is_invalid_params() {
    for bytes in [
        &br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}"#[..],
        br#"{"jsonrpc":"2.0","id":4,"method":"tools/call"}"#,
        br#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{}}"#,
    ] {
        let reply = answer(bytes);
        assert_eq!(reply["error"]["code"], INVALID_PARAMS, "{}", String::from_utf8_lossy(bytes));
        assert_eq!(reply["id"], 4);
    }
    // An unknown method goes on to the handler, which names it.
    let unknown = br#"{"jsonrpc":"2.0","id":5,"method":"no/such"}"#;
    assert!(matches!(verdict(unknown), Verdict::Forward(_)));
}
