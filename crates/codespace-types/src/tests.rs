//! Every word's text forms agree: `as_str`, `parse`, `FromStr`, serde and the JSON schema.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::*;

fn agree<T>(all: &[T], texts: &[&str])
where
    T: Copy + PartialEq + std::fmt::Debug + std::fmt::Display + std::str::FromStr,
    T: Serialize + DeserializeOwned + schemars::JsonSchema,
    <T as std::str::FromStr>::Err: std::fmt::Display,
{
    assert_eq!(all.len(), texts.len());
    for (value, text) in all.iter().zip(texts) {
        assert_eq!(value.to_string(), *text);
        assert_eq!(text.parse::<T>().ok(), Some(*value));
        let json = serde_json::to_value(value).unwrap();
        assert_eq!(json, serde_json::Value::String((*text).to_owned()));
        assert_eq!(serde_json::from_value::<T>(json).unwrap(), *value);
    }
    let refused = "Not-A-Word".parse::<T>().err().unwrap().to_string();
    assert!(refused.contains("`Not-A-Word`, expected one of"), "{refused}");
    assert!(texts.iter().all(|t| refused.contains(&format!("`{t}`"))), "{refused}");
    let schema = serde_json::to_string(&schemars::schema_for!(T)).unwrap();
    assert!(texts.iter().all(|t| schema.contains(&format!("\"{t}\""))), "{schema}");
}

macro_rules! check {
    ($($word:ident),+) => {
        $(agree(&$word::ALL, &$word::TEXTS);)+
        $(for value in $word::ALL {
            assert_eq!($word::parse(value.as_str()), Some(value));
        })+
    };
}

#[test]
fn every_word_agrees_with_itself() {
    check!(
        Profile,
        Approvals,
        Approvers,
        EnvironmentKind,
        SandboxSetting,
        NetworkPolicy,
        ChangeKind,
        PatchStatus,
        EventName,
        ProcessState,
        Termination,
        RootStatus,
        WatchState,
        ObservedChange,
        ApprovalState,
        HeldTool,
        Decision,
        WorkState,
        IntentState,
        Delivery,
        IntentKind,
        LineDifference,
        IntentAuthor
    );
}

#[test]
fn the_refusal_names_the_word_and_every_value() {
    let refused = "admin".parse::<Profile>().unwrap_err().to_string();
    assert_eq!(refused, "unknown Profile `admin`, expected one of `read-only`, `workspace-write`");
}

#[test]
fn a_signal_without_a_name_omits_it_in_json_only() {
    let bare = SignalInfo { number: 40, name: None };
    assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"number":40}"#);
    let named = SignalInfo { number: 9, name: Some("SIGKILL".to_owned()) };
    assert_eq!(serde_json::to_string(&named).unwrap(), r#"{"number":9,"name":"SIGKILL"}"#);
    let back: SignalInfo = serde_json::from_str(r#"{"number":40}"#).unwrap();
    assert_eq!(back, bare);
}
