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
