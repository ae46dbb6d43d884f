//! The version handshake, both ends: the client's `Hello`, the worker's `Welcome` or
//! `Refused`, and the refusal's text, which names both versions in a form the client reads
//! back (the `Refused` frame has only a reason, and its shape may not change).

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{FramedRead, FramedWrite, LengthDelimitedCodec};

use super::{Frame, PROTOCOL, Payload, ServeError, ServeOptions, decode, encode, handshake_done};
use crate::HandshakeError;

/// How long either end waits for the other's handshake frame: a worker that started answers
/// at once, so longer means it is stuck or is not a worker.
pub(super) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

const REFUSAL_HEAD: &str = "protocol mismatch: the runner worker speaks protocol ";
const REFUSAL_BUILD: &str = " (build ";
const REFUSAL_CLIENT: &str = "), the client speaks protocol ";

/// The worker's refusal of a client on another protocol.
pub(super) fn refusal(worker: u32, worker_build: &str, client: u32, client_build: &str) -> String {
    format!(
        "{REFUSAL_HEAD}{worker}{REFUSAL_BUILD}{worker_build}{REFUSAL_CLIENT}{client}{REFUSAL_BUILD}{client_build})"
    )
}

/// The worker's protocol and build named in a [`refusal`], if the reason is one.
pub(super) fn parse_refusal(reason: &str) -> Option<(u32, String)> {
    let rest = reason.strip_prefix(REFUSAL_HEAD)?;
    let (number, rest) = rest.split_once(REFUSAL_BUILD)?;
    let (build, _) = rest.rsplit_once(REFUSAL_CLIENT)?;
    Some((number.parse().ok()?, build.to_owned()))
}

type Reader<R> = FramedRead<R, LengthDelimitedCodec>;
type Writer<W> = FramedWrite<W, LengthDelimitedCodec>;

/// The client's side: send `Hello`, accept only a `Welcome` on our protocol.
pub(super) async fn hello<Req: Payload, Resp: Payload, Ev: Payload, R, W>(
    read: &mut Reader<R>,
    write: &mut Writer<W>,
    build: &str,
) -> Result<(), HandshakeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let hello = Frame::<Req, Resp, Ev>::Hello { protocol: PROTOCOL, build: build.to_owned() };
    let bytes = encode(&hello).map_err(|e| HandshakeError::Unexpected(e.to_string()))?;
    // Bounded as a whole: a worker that does not read blocks the write as surely as one that
    // does not answer blocks the read.
    let answer = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
        write.send(bytes).await?;
        read.next().await.transpose()
    })
    .await
    .map_err(|_| HandshakeError::Timeout)??;
    let Some(bytes) = answer else { return Err(HandshakeError::Closed) };
    match decode::<Req, Resp, Ev>(&bytes) {
        Ok(Frame::Welcome { protocol, .. }) if protocol == PROTOCOL => {
            handshake_done(read);
            Ok(())
        }
        Ok(Frame::Welcome { protocol, build }) => {
            Err(HandshakeError::Mismatch { ours: PROTOCOL, theirs: protocol, their_build: build })
        }
        Ok(Frame::Refused { reason }) => Err(match parse_refusal(&reason) {
            Some((theirs, their_build)) if theirs != PROTOCOL => {
                HandshakeError::Mismatch { ours: PROTOCOL, theirs, their_build }
            }
            _ => HandshakeError::Refused(reason),
        }),
        Ok(other) => Err(HandshakeError::Unexpected(format!("a {} frame", other.kind()))),
        Err(e) => Err(HandshakeError::Unexpected(e.to_string())),
    }
}

/// The worker's side: `Ok(true)` once the client is welcome, `Ok(false)` when it left before
/// saying hello; a client on another protocol is refused (and told why).
pub(super) async fn welcome<Req: Payload, Resp: Payload, Ev: Payload, R, W>(
    read: &mut Reader<R>,
    write: &mut Writer<W>,
    opts: &ServeOptions<Req>,
) -> Result<bool, ServeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let first = tokio::time::timeout(HANDSHAKE_TIMEOUT, read.next())
        .await
        .map_err(|_| ServeError::Timeout)?;
    let Some(bytes) = first.transpose()? else { return Ok(false) };
    let (answer, outcome) = match decode::<Req, Resp, Ev>(&bytes) {
        Ok(Frame::Hello { protocol, .. }) if protocol == opts.protocol => {
            (Frame::Welcome { protocol, build: opts.build.clone() }, Ok(true))
        }
        Ok(Frame::Hello { protocol, build }) => {
            let reason = refusal(opts.protocol, &opts.build, protocol, &build);
            let error =
                ServeError::Mismatch { ours: opts.protocol, theirs: protocol, their_build: build };
            (Frame::Refused { reason }, Err(error))
        }
        Ok(other) => {
            let reason = format!("the first frame must be Hello, not {}", other.kind());
            (Frame::Refused { reason }, Err(ServeError::Unexpected(other.kind())))
        }
        Err(e) => {
            let reason = format!("the first frame does not decode: {e}");
            (Frame::Refused { reason }, Err(ServeError::Decode(e.to_string())))
        }
    };
    let bytes = encode::<Req, Resp, Ev>(&answer)
        .map_err(|e| ServeError::Encode { frame: answer.kind(), reason: e.to_string() })?;
    // A refusal is best effort: the client may be gone already, and the refusal is the error.
    let sent = write.send(bytes).await;
    match outcome {
        Ok(welcome) => {
            handshake_done(read);
            sent.map(|()| welcome).map_err(ServeError::from)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests;
