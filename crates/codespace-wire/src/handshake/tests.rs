//! The handshake's frame cap, both ends: a peer that announces a frame over
//! `MAX_HANDSHAKE_FRAME_BYTES` before the handshake is refused at once (nothing set aside
//! for it, no wait for bytes that are not coming), and after the handshake the full cap
//! applies.

use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use crate::{
    Client, HandshakeError, MAX_FRAME_BYTES, MAX_HANDSHAKE_FRAME_BYTES, ServeError, ServeOptions,
    welcome,
};

/// A big-endian length announcing 256 MiB, and no body.
fn huge_length() -> [u8; 4] {
    u32::try_from(MAX_FRAME_BYTES).unwrap().to_be_bytes()
}

#[tokio::test]
async fn a_client_announcing_a_huge_first_frame_is_refused_at_once() {
    let (server, mut peer) = UnixStream::pair().unwrap();
    peer.write_all(&huge_length()).await.unwrap();
    let opts = ServeOptions::<u32>::new("test");
    let outcome = welcome::<u32, u32, u32>(server, &opts).await;
    let err = outcome.expect_err("refused");
    assert!(matches!(err, ServeError::Io(_)), "{err}");
    assert!(err.to_string().contains("frame size too big"), "{err}");
}

#[tokio::test]
async fn a_worker_announcing_a_huge_first_frame_is_refused_at_once() {
    let (client, mut fake) = UnixStream::pair().unwrap();
    fake.write_all(&huge_length()).await.unwrap();
    let err = Client::<u32, u32, u32>::connect(client, "test").await.expect_err("refused");
    assert!(matches!(err, HandshakeError::Io(_)), "{err}");
}

#[tokio::test]
async fn a_first_frame_just_over_the_handshake_cap_is_refused_and_junk_is_told_so() {
    let (server, mut peer) = UnixStream::pair().unwrap();
    let over = u32::try_from(MAX_HANDSHAKE_FRAME_BYTES + 1).unwrap();
    peer.write_all(&over.to_be_bytes()).await.unwrap();
    let opts = ServeOptions::<u32>::new("test");
    assert!(welcome::<u32, u32, u32>(server, &opts).await.is_err());
    // A frame of junk within the cap: refused as undecodable.
    let (server, mut peer) = UnixStream::pair().unwrap();
    peer.write_all(&[0, 0, 0, 3, 0xff, 0xff, 0xff]).await.unwrap();
    let err = welcome::<u32, u32, u32>(server, &opts).await.expect_err("refused");
    assert!(matches!(err, ServeError::Decode(_)), "{err}");
    // A peer that connects and leaves is no error at all.
    let (server, peer) = UnixStream::pair().unwrap();
    drop(peer);
    assert!(welcome::<u32, u32, u32>(server, &opts).await.unwrap().is_none());
}
