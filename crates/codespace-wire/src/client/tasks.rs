//! The client connection's reader task, which routes answers to their callers and events to
//! the channel, and marks the connection lost when it ends. (Frames are written by their
//! callers, one at a time: `state::Inner::send`.)

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::net::unix::OwnedReadHalf;
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LengthDelimitedCodec};

use super::Inner;
use crate::{Frame, Payload, decode};

/// Reads frames until the connection ends, then marks it lost with the reason.
pub(super) async fn read_loop<Req: Payload, Resp: Payload, Ev: Payload>(
    inner: Arc<Inner<Resp>>,
    mut stream: FramedRead<OwnedReadHalf, LengthDelimitedCodec>,
    events: mpsc::UnboundedSender<Ev>,
) {
    let reason = loop {
        let next = tokio::select! {
            biased;
            () = inner.lost.cancelled() => return,
            next = stream.next() => next,
        };
        let bytes = match next {
            None => break "the runner worker closed the connection".to_owned(),
            Some(Err(e)) => break format!("reading from the runner worker failed: {e}"),
            Some(Ok(bytes)) => bytes,
        };
        match decode::<Req, Resp, Ev>(&bytes) {
            Ok(Frame::Response { id, body }) => inner.answer(id, body),
            Ok(Frame::NoReplay { id }) => inner.no_replay(id),
            Ok(Frame::Event(event)) => {
                // The owner may have stopped listening to events; calls still work.
                let _ = events.send(event);
            }
            Ok(other) => {
                break format!("the runner worker sent an unexpected {} frame", other.kind());
            }
            Err(e) => break format!("undecodable frame from the runner worker: {e}"),
        }
    };
    inner.lose(reason);
}
