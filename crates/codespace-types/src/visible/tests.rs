//! Unit tests of `visible`: what is written out, JSON that stays JSON, refused names.

use super::*;

#[test]
fn hidden_characters_are_written_out() {
    assert_eq!(escape("readme\u{202E}txt.hs", false), "readme\\u{202E}txt.hs");
    assert_eq!(
        escape("a\u{1b}[31mb\u{0}c\rd\u{2028}e", false),
        "a\\u{001B}[31mb\\u{0000}c\\u{000D}d\\u{2028}e"
    );
    assert_eq!(
        escape("x\u{7f}\u{85}\u{200B}\u{FEFF}\u{2066}", false),
        "x\\u{007F}\\u{0085}\\u{200B}\\u{FEFF}\\u{2066}"
    );
    assert_eq!(escape("two\nlines\tand tab", true), "two\nlines\tand tab");
    assert_eq!(escape("two\nlines", false), "two\\u{000A}lines");
    assert!(matches!(escape("plain ünïcode עברית", false), Cow::Borrowed(_)));
}

#[test]
fn json_stays_json() {
    let text = serde_json::to_string(&["a\u{202E}b", "\u{E0041}", "\u{1b}"]).unwrap();
    let escaped = escape_json(&text);
    assert_eq!(escaped, "[\"a\\u202eb\",\"\\udb40\\udc41\",\"\\u001b\"]");
    let back: Vec<String> = serde_json::from_str(&escaped).unwrap();
    assert_eq!(back, ["a\u{202E}b", "\u{E0041}", "\u{1b}"]);
    let pretty = serde_json::to_string_pretty(&["x\ny", "\u{2028}"]).unwrap();
    let escaped = escape_json(&pretty);
    assert_eq!(escaped, "[\n  \"x\\ny\",\n  \"\\u2028\"\n]");
    let back: Vec<String> = serde_json::from_str(&escaped).unwrap();
    assert_eq!(back, ["x\ny", "\u{2028}"]);
}

#[test]
fn names_a_patch_may_not_create() {
    for bad in
        ["a\u{1b}b", "a\0", "a\rb", "a\u{2028}", "a\u{202E}b", "a\u{7f}", "a\u{9b}", "\u{200F}x"]
    {
        assert!(refused_in_name(bad).is_some(), "{bad:?}");
    }
    for good in ["src/main.rs", "דוקומנט.txt", "emoji\u{200D}.txt", "tab-free name"] {
        assert_eq!(refused_in_name(good), None, "{good:?}");
    }
}
