//! Unit tests for version formatting and parsing.

use super::*;

#[test]
fn display_and_parse_round_trip() {
    let empty = Version::of_bytes(b"");
    let text = empty.to_string();
    assert_eq!(text, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_eq!(text.parse::<Version>(), Ok(empty));
    assert_eq!(Version::Absent.to_string(), "absent");
    assert_eq!("absent".parse::<Version>(), Ok(Version::Absent));
}

#[test]
fn parse_is_strict() {
    let upper = "sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855";
    for bad in ["", "Absent", "sha256:", "sha256:00", upper, "sha1:00", "sha256:zz"] {
        assert_eq!(bad.parse::<Version>(), Err(ParseVersionError), "{bad:?}");
    }
}

#[test]
fn serde_uses_the_text_form() {
    let v = Version::of_bytes(b"x");
    let json = serde_json::to_string(&v).unwrap();
    assert_eq!(json, format!("\"{v}\""));
    assert_eq!(serde_json::from_str::<Version>(&json).unwrap(), v);
    assert_eq!(serde_json::to_string(&Version::Absent).unwrap(), "\"absent\"");
    assert!(serde_json::from_str::<Version>("\"sha256:00\"").is_err());
}

#[test]
fn versions_are_absent_or_full_lowercase_sha256() {
    const H1: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000001";
    const H2: &str = "sha256:abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdef0123";
    let ok = |s: &str| s.parse::<Version>().is_ok();
    assert!(ok("absent"));
    assert!(ok(H1));
    assert!(ok(H2));
    assert!(!ok(""));
    assert!(!ok("Absent"));
    assert!(!ok("sha256:"));
    assert!(!ok(&H1[..H1.len() - 1]));
    assert!(!ok(&format!("{H1}0")));
    assert!(!ok(&H2.to_uppercase().replace("SHA256", "sha256")));
    assert!(!ok(&H1.replace("sha256", "sha512")));
    assert_eq!(H2.parse::<Version>().map(|v| v.to_string()).as_deref(), Ok(H2));
}
