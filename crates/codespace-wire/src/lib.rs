//! The runner worker's wire: postcard frames in big-endian length-delimited envelopes over a
//! Unix socket, the version handshake, request ids, deadlines, cancellation and replay. It is
//! generic over the request, response and event types, which the gateway and worker define.
//!
//! [`Client`] is the gateway's end: a caller writes its own frame, taking its turn on the
//! write half (frames never interleave; a write that cannot finish at once is finished by a
//! task, never left half-written), and each frame records whether its write started, so a
//! failed call says exactly whether the request may have run ([`CallError`]). [`serve`] is the worker's end:
//! every request runs as its own task, and the last [`REPLAY_RESPONSES`] answers are kept.
//!
//! Architecture Invariant: the wire knows no operation; it moves whole values of the caller's
//! types and never looks inside them.

mod client;
mod handshake;
mod serve;

use std::time::Instant;

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::bytes::Bytes;
use tokio_util::codec::{FramedRead, FramedWrite, LengthDelimitedCodec};
use tokio_util::sync::CancellationToken;

pub use client::{CallError, Client, HandshakeError};
pub use serve::{HangUp, ServeError, ServeOptions, Welcomed, serve, serve_welcomed, welcome};

/// The wire's version, bumped on any incompatible change (of this crate or of the payload
/// types its one user, the runner, sends): the handshake refuses a peer on another one.
/// 3: a request is its operation's tag and its job's own encoding, and an answer the job's
/// answer in its own encoding. 4: a command's kill grace (spawn, terminate, its answer).
/// 5: a command's external policy. 6: a patch's plan stays in the runner, and its apply
/// names it; a job and its answer are encoded once, inside their frame. 7: a read of a
/// command's output answers its state with it.
pub const PROTOCOL: u32 = 7;

/// The largest frame either side writes or reads. A frame over it is an error at once (never
/// a read that waits for bytes that are not coming).
pub const MAX_FRAME_BYTES: usize = 256 << 20;

/// The largest frame either side reads before the handshake succeeded: a `Hello`, a
/// `Welcome` or a `Refused` is a few hundred bytes, and a peer that is not (yet) known to be
/// the other end must not make this one set aside [`MAX_FRAME_BYTES`] for a length it
/// announces. A longer frame ends that connection at once.
pub const MAX_HANDSHAKE_FRAME_BYTES: usize = 64 << 10;

/// How many answers the worker keeps, by request id, for [`Client::replay`].
pub const REPLAY_RESPONSES: usize = 32;

/// When the worker must stop working on a request (its caller's deadline, as the worker
/// received it).
pub type Deadline = Instant;

/// One frame on the worker socket. The three handshake variants come first and keep their
/// shape across versions, so that two builds on different protocols can still tell each
/// other so.
#[derive(Debug, Serialize, Deserialize)]
pub enum Frame<Req, Resp, Ev> {
    /// Client to worker, the first frame.
    Hello { protocol: u32, build: String },
    /// Worker to client: the handshake succeeded (if the protocols agree).
    Welcome { protocol: u32, build: String },
    /// Worker to client, after which the worker closes the connection.
    Refused { reason: String },
    /// Client to worker: run `body`, answer before `deadline_ms` from now.
    Request { id: u64, deadline_ms: u64, body: Req },
    /// Client to worker: the caller gave up on `id`.
    Cancel { id: u64 },
    /// Client to worker: send the answer to `id` again.
    Replay { id: u64 },
    /// Worker to client: the answer to request `id`.
    Response { id: u64, body: Resp },
    /// Worker to client: the answer to `id` is not (or no longer) kept.
    NoReplay { id: u64 },
    /// Worker to client, unsolicited.
    Event(Ev),
}

/// What can cross the wire: a value postcard can encode and decode, movable between tasks.
pub trait Payload: Serialize + DeserializeOwned + Send + 'static {}

impl<T: Serialize + DeserializeOwned + Send + 'static> Payload for T {}

impl<Req, Resp, Ev> Frame<Req, Resp, Ev> {
    /// The variant's name, for errors and logs (never the payload: it may be large or
    /// private).
    fn kind(&self) -> &'static str {
        match self {
            Frame::Hello { .. } => "Hello",
            Frame::Welcome { .. } => "Welcome",
            Frame::Refused { .. } => "Refused",
            Frame::Request { .. } => "Request",
            Frame::Cancel { .. } => "Cancel",
            Frame::Replay { .. } => "Replay",
            Frame::Response { .. } => "Response",
            Frame::NoReplay { .. } => "NoReplay",
            Frame::Event(_) => "Event",
        }
    }
}

/// A request's cancellation as the worker's handler sees it: raised when the client sends
/// `Cancel` for it or the connection ends. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Cancelled(CancellationToken);

impl Cancelled {
    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    /// Resolves once the request is cancelled.
    pub async fn cancelled(&self) {
        self.0.cancelled().await;
    }

    fn cancel(&self) {
        self.0.cancel();
    }
}

/// Why a value could not become a frame.
#[derive(Debug, thiserror::Error)]
enum EncodeError {
    /// Its encoding is over [`MAX_FRAME_BYTES`].
    #[error("the frame encodes to {0} bytes, over the {MAX_FRAME_BYTES}-byte cap")]
    TooLarge(usize),
    /// The serializer refused it (a type postcard cannot express, say).
    #[error("the frame does not encode: {0}")]
    Serialize(postcard::Error),
}

/// Encodes one frame, refusing it here when it is over the cap (so the codec never has to).
fn encode<Req: Payload, Resp: Payload, Ev: Payload>(
    frame: &Frame<Req, Resp, Ev>,
) -> Result<Bytes, EncodeError> {
    let bytes = postcard::to_stdvec(frame).map_err(EncodeError::Serialize)?;
    if bytes.len() > MAX_FRAME_BYTES {
        return Err(EncodeError::TooLarge(bytes.len()));
    }
    Ok(Bytes::from(bytes))
}

fn decode<Req: Payload, Resp: Payload, Ev: Payload>(
    bytes: &[u8],
) -> Result<Frame<Req, Resp, Ev>, postcard::Error> {
    postcard::from_bytes(bytes)
}

/// The codec both ends use: a big-endian u32 length, then that many bytes, at most `max`.
fn codec(max: usize) -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .big_endian()
        .length_field_type::<u32>()
        .max_frame_length(max)
        .new_codec()
}

/// A reader that accepts only handshake-sized frames until [`handshake_done`] lifts it.
fn framed_read<R: AsyncRead>(read: R) -> FramedRead<R, LengthDelimitedCodec> {
    FramedRead::new(read, codec(MAX_HANDSHAKE_FRAME_BYTES))
}

/// The handshake succeeded: the peer may now send frames up to [`MAX_FRAME_BYTES`].
fn handshake_done<R>(read: &mut FramedRead<R, LengthDelimitedCodec>) {
    read.decoder_mut().set_max_frame_length(MAX_FRAME_BYTES);
}

fn framed_write<W: AsyncWrite>(write: W) -> FramedWrite<W, LengthDelimitedCodec> {
    FramedWrite::new(write, codec(MAX_FRAME_BYTES))
}

#[cfg(test)]
mod tests;
