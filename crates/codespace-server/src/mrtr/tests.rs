//! Unit tests of `mrtr`: reading the person's answer out of a retry's `inputResponses`.

use serde_json::json;

use super::*;

fn answer(value: serde_json::Value) -> Option<Decision> {
    let responses: InputResponses = serde_json::from_value(json!({ INPUT_KEY: value })).unwrap();
    decision(Some(responses))
}

#[test]
fn accept_with_grant_grants_and_decline_or_unticked_denies() {
    assert_eq!(
        answer(json!({"action": "accept", "content": {"grant": true}})),
        Some(Decision::Grant)
    );
    assert_eq!(
        answer(json!({"action": "accept", "content": {"grant": false}})),
        Some(Decision::Deny)
    );
    assert_eq!(answer(json!({"action": "decline"})), Some(Decision::Deny));
}

#[test]
fn cancel_a_missing_or_a_malformed_answer_decides_nothing() {
    assert_eq!(answer(json!({"action": "cancel"})), None);
    assert_eq!(answer(json!({"action": "accept"})), None);
    assert_eq!(answer(json!({"action": "accept", "content": {"grant": "yes"}})), None);
    assert_eq!(answer(json!("accept")), None);
    assert_eq!(decision(None), None);
    let other: InputResponses =
        serde_json::from_value(json!({"other": {"action": "accept", "content": {"grant": true}}}))
            .unwrap();
    assert_eq!(decision(Some(other)), None);
}
