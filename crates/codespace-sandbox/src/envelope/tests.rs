//! Unit tests of `envelope`.

use super::*;

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Probe {
    n: u32,
    bytes: Vec<OsString>,
}

#[test]
fn messages_round_trip_in_every_transport() {
    let m = Probe { n: 7, bytes: vec!["a b".into(), "".into(), "x\ny".into()] };
    assert_eq!(decode::<Probe>(&encode(&m).unwrap()), Ok(m));
    let m = Probe { n: 8, bytes: vec!["z".repeat(100_000).into()] };
    let args = to_args(&m).unwrap();
    assert!(args.len() > 1 && args.iter().all(|a| a.len() <= ARG_CHUNK));
    assert_eq!(from_args::<Probe>(&args), Ok(m));
    let m = Probe { n: 9, bytes: vec![] };
    let f = frame(&m).unwrap();
    let len = u32::from_le_bytes([f[0], f[1], f[2], f[3]]) as usize;
    assert_eq!(len, f.len() - 4);
    assert_eq!(decode::<Probe>(&f[4..]), Ok(m));
}

#[test]
fn another_version_or_garbage_is_refused_and_says_why() {
    let mut other = postcard::to_stdvec(&(VERSION + 1, Probe { n: 1, bytes: vec![] })).unwrap();
    let e = decode::<Probe>(&other).unwrap_err();
    assert_eq!(e, EnvelopeError::Version { got: VERSION + 1 });
    assert!(e.to_string().contains("different builds"), "{e}");
    other[0] = VERSION as u8;
    other.push(0);
    assert!(matches!(decode::<Probe>(&other), Err(EnvelopeError::Malformed(_))));
    assert!(decode::<Probe>(b"").is_err());
    assert!(from_args::<Probe>(&["zz".into()]).is_err());
    assert!(from_args::<Probe>(&[]).is_err());
}
