//! Unit tests of `http_json`.

use super::*;

#[test]
fn an_event_ends_at_its_blank_line() {
    assert_eq!(event_end(b"data: x\n"), None);
    assert_eq!(event_end(b"data: x\n\nrest"), Some(9));
    assert_eq!(event_end(b"data: x\r\n\r\nrest"), Some(11));
}

#[test]
fn the_first_data_event_decides() {
    let priming = "data: \nid: 0\nretry: 3000\n\n";
    assert_eq!(first_message(priming.as_bytes()), First::Incomplete);
    let response = format!("{priming}data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}\n\n");
    assert_eq!(
        first_message(response.as_bytes()),
        First::Response("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".to_owned())
    );
    let cut = &response.as_bytes()[..response.len() - 3];
    assert_eq!(first_message(cut), First::Incomplete, "an event without its blank line");
    let progress =
        format!("{priming}data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}}\n\n");
    assert_eq!(first_message(progress.as_bytes()), First::Other);
    let crlf = "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{}}\r\n\r\n";
    assert!(matches!(first_message(crlf.as_bytes()), First::Response(_)));
    // An error to a request whose id could not be read has a null id: still a response.
    let null_id = "data: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700}}\n\n";
    assert!(matches!(first_message(null_id.as_bytes()), First::Response(_)));
    // A request (an id, no result or error) is not.
    let request = "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"elicitation/create\"}\n\n";
    assert_eq!(first_message(request.as_bytes()), First::Other);
}
