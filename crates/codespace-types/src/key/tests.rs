//! Unit tests of `key`: RFC 4231 vectors and what a seal verifies.

use super::*;

#[test]
fn rfc_4231_vectors() {
    // Test case 2: key "Jefe".
    assert_eq!(
        hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    // Test case 6: a key longer than one block.
    assert_eq!(
        hex::encode(hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First"
        )),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    );
}

#[test]
fn a_seal_verifies_only_its_own_parts_domain_and_key() {
    let key = ServerKey::from_bytes([7; KEY_BYTES]);
    let seal = key.seal("hold", &[b"ab", b"c"]);
    assert!(seal.starts_with("hmac-sha256:") && seal.len() == 12 + 64, "{seal}");
    assert!(key.verify("hold", &[b"ab", b"c"], &seal));
    assert!(!key.verify("hold", &[b"a", b"bc"], &seal), "parts are length-prefixed");
    assert!(!key.verify("other", &[b"ab", b"c"], &seal));
    assert!(!ServerKey::from_bytes([8; KEY_BYTES]).verify("hold", &[b"ab", b"c"], &seal));
    assert!(!key.verify("hold", &[b"ab", b"c"], "hmac-sha256:00"));
    assert!(!key.verify("hold", &[b"ab", b"c"], ""));
    assert_eq!(format!("{key:?}"), "ServerKey(..)");
}
