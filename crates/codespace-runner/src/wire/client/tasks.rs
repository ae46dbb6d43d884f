//! The client connection's two tasks: the writer, the only one that writes to the socket (so
//! frames never interleave), and the reader, which routes answers to their callers and events
//! to the channel. Either one marks the connection lost when its half fails.

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, FramedWrite, LengthDelimitedCodec};

use super::{Inner, Outgoing};
use crate::wire::{Frame, Payload, decode};

/// Writes queued frames in order until the connection is lost. A frame whose caller gave up
/// before it started is skipped; once started, it is the caller's "may have run".
pub(super) async fn write_loop<Resp>(
    inner: Arc<Inner<Resp>>,
    mut sink: FramedWrite<OwnedWriteHalf, LengthDelimitedCodec>,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
) {
    loop {
        let next = tokio::select! {
            biased;
            () = inner.lost.cancelled() => return,
            next = queue.recv() => next,
        };
        let Some(Outgoing { bytes, progress }) = next else { return };
        if let Some(progress) = progress
            && !progress.start()
        {
            continue;
        }
        // A worker that stops reading must not hold the writer past the connection's end.
        let sent = tokio::select! {
            biased;
            () = inner.lost.cancelled() => return,
            sent = sink.send(bytes) => sent,
        };
        if let Err(e) = sent {
            inner.lose(format!("writing to the runner worker failed: {e}"));
            return;
        }
    }
}

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
