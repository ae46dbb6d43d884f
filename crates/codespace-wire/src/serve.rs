//! The worker's end of the socket: [`serve`] checks the client's version, runs each request
//! as its own task (a long wait never blocks the reading of the next frame), writes answers
//! and events through one writer, and keeps the last answers for replay.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;
use tokio_util::bytes::Bytes;
use tokio_util::codec::{FramedRead, FramedWrite, LengthDelimitedCodec};

use super::handshake::{self, HANDSHAKE_TIMEOUT};
use super::{
    Cancelled, Deadline, EncodeError, Frame, MAX_FRAME_BYTES, PROTOCOL, Payload, REPLAY_RESPONSES,
    decode, encode, framed_read, framed_write,
};

/// A test hook: when it returns true for a request, the worker runs the request and then
/// closes the connection instead of answering (the client's "it may have run").
pub type HangUp<Req> = Arc<dyn Fn(&Req) -> bool + Send + Sync>;

/// How [`serve`] introduces itself and behaves.
pub struct ServeOptions<Req> {
    /// Named in the handshake, so a mismatch says which builds disagree.
    pub build: String,
    /// [`PROTOCOL`]; another value only in tests of the mismatch.
    pub protocol: u32,
    /// Inert unless set: see [`HangUp`].
    pub hang_up: Option<HangUp<Req>>,
}

impl<Req> ServeOptions<Req> {
    /// This build on the current protocol, without hooks.
    pub fn new(build: impl Into<String>) -> Self {
        ServeOptions { build: build.into(), protocol: PROTOCOL, hang_up: None }
    }
}

impl<Req> std::fmt::Debug for ServeOptions<Req> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("build", &self.build)
            .field("protocol", &self.protocol)
            .field("hang_up", &self.hang_up.is_some())
            .finish()
    }
}

/// Why [`serve`] closed the connection with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client is another build, on another protocol; it was told so.
    #[error(
        "the client speaks protocol {theirs} (build {their_build}), this runner worker speaks \
         {ours}: refused"
    )]
    Mismatch { ours: u32, theirs: u32, their_build: String },
    #[error("worker socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("the client sent no handshake within {HANDSHAKE_TIMEOUT:?}")]
    Timeout,
    /// The client sent a frame only a worker sends, or a second `Hello`.
    #[error("the client sent an unexpected {0} frame")]
    Unexpected(&'static str),
    #[error("undecodable frame from the client: {0}")]
    Decode(String),
    /// An answer is over [`MAX_FRAME_BYTES`]: the connection closes rather than leave the
    /// caller waiting for an answer that cannot be sent.
    #[error(
        "the answer to request {id} encodes to {bytes} bytes, over the {MAX_FRAME_BYTES}-byte frame cap"
    )]
    TooLarge { id: u64, bytes: usize },
    #[error("a {frame} frame does not encode: {reason}")]
    Encode { frame: &'static str, reason: String },
}

/// Why the serving loop must end, as reported by a task.
enum Stop {
    /// The [`HangUp`] hook asked to close without answering `id`.
    HungUp(u64),
    Failed(ServeError),
}

/// What the serving loop and the request tasks share.
struct Shared {
    /// To the writer task, the only one that writes to the socket.
    out: mpsc::UnboundedSender<Bytes>,
    /// The last answers, encoded, oldest first.
    answers: Mutex<VecDeque<(u64, Bytes)>>,
    /// The requests still running, by id, for `Cancel`.
    running: Mutex<HashMap<u64, Cancelled>>,
    stop: mpsc::UnboundedSender<Stop>,
}

/// A connection whose client passed the handshake (see [`welcome`]), ready for
/// [`serve_welcomed`].
pub struct Welcomed {
    read: FramedRead<OwnedReadHalf, LengthDelimitedCodec>,
    write: FramedWrite<OwnedWriteHalf, LengthDelimitedCodec>,
}

impl std::fmt::Debug for Welcomed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Welcomed").finish_non_exhaustive()
    }
}

/// The handshake alone: `Ok(Some)` once the client said hello on our protocol, `Ok(None)`
/// when it left before saying anything, an error (after telling it why, where it can be
/// told) for anything else. Until it succeeds no frame over [`MAX_HANDSHAKE_FRAME_BYTES`]
/// is read, and it ends within the handshake timeout: a listener can try each connection
/// in turn without a bad peer costing it more.
///
/// [`MAX_HANDSHAKE_FRAME_BYTES`]: crate::MAX_HANDSHAKE_FRAME_BYTES
pub async fn welcome<Req: Payload, Resp: Payload, Ev: Payload>(
    stream: UnixStream,
    opts: &ServeOptions<Req>,
) -> Result<Option<Welcomed>, ServeError> {
    let (read, write) = stream.into_split();
    let (mut read, mut write) = (framed_read(read), framed_write(write));
    if !handshake::welcome::<Req, Resp, Ev, _, _>(&mut read, &mut write, opts).await? {
        return Ok(None);
    }
    Ok(Some(Welcomed { read, write }))
}

/// Serves one client until it goes away (`Ok`) or the connection fails: [`welcome`], then
/// [`serve_welcomed`].
pub async fn serve<Req, Resp, Ev, H, Fut>(
    stream: UnixStream,
    opts: ServeOptions<Req>,
    handler: H,
    events: mpsc::UnboundedReceiver<Ev>,
) -> Result<(), ServeError>
where
    Req: Payload,
    Resp: Payload,
    Ev: Payload,
    H: Fn(Req, Deadline, Cancelled) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Resp> + Send + 'static,
{
    match welcome::<Req, Resp, Ev>(stream, &opts).await? {
        Some(welcomed) => serve_welcomed(welcomed, opts, handler, events).await,
        None => Ok(()),
    }
}

/// Serves a welcomed client until it goes away (`Ok`) or the connection fails. Every
/// request runs `handler` in its own task; `events` are written as they come. On return
/// every running request's [`Cancelled`] is raised (their answers are dropped) and the
/// socket is closed.
pub async fn serve_welcomed<Req, Resp, Ev, H, Fut>(
    welcomed: Welcomed,
    opts: ServeOptions<Req>,
    handler: H,
    events: mpsc::UnboundedReceiver<Ev>,
) -> Result<(), ServeError>
where
    Req: Payload,
    Resp: Payload,
    Ev: Payload,
    H: Fn(Req, Deadline, Cancelled) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Resp> + Send + 'static,
{
    let Welcomed { read, write } = welcomed;
    let (out, queue) = mpsc::unbounded_channel();
    let (stop, stops) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        out,
        answers: Mutex::new(VecDeque::with_capacity(REPLAY_RESPONSES)),
        running: Mutex::new(HashMap::new()),
        stop: stop.clone(),
    });
    let writer = tokio::spawn(write_loop(write, queue, stop));
    let worker = Worker::<Req, Resp, Ev, H> {
        shared: Arc::clone(&shared),
        handler,
        hang_up: opts.hang_up,
        types: PhantomData,
    };
    let result = worker.run(read, events, stops).await;
    for (_, cancelled) in lock(&shared.running).drain() {
        cancelled.cancel();
    }
    // Dropping the write half (with the read half, on return) closes the socket now, even
    // while request tasks still hold the writer's queue.
    writer.abort();
    let _ = writer.await;
    match &result {
        Ok(()) => tracing::info!("runner wire: the client went away"),
        Err(e) => tracing::warn!(error = %e, "runner wire: connection closed"),
    }
    result
}

/// Writes frames in order until the queue ends or a write fails.
async fn write_loop(
    mut sink: FramedWrite<OwnedWriteHalf, LengthDelimitedCodec>,
    mut queue: mpsc::UnboundedReceiver<Bytes>,
    stop: mpsc::UnboundedSender<Stop>,
) {
    while let Some(bytes) = queue.recv().await {
        if let Err(e) = sink.send(bytes).await {
            let _ = stop.send(Stop::Failed(e.into()));
            return;
        }
    }
}

struct Worker<Req, Resp, Ev, H> {
    shared: Arc<Shared>,
    handler: H,
    hang_up: Option<HangUp<Req>>,
    types: PhantomData<fn() -> (Resp, Ev)>,
}

impl<Req, Resp, Ev, H, Fut> Worker<Req, Resp, Ev, H>
where
    Req: Payload,
    Resp: Payload,
    Ev: Payload,
    H: Fn(Req, Deadline, Cancelled) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Resp> + Send + 'static,
{
    /// Reads frames, forwards events and watches the tasks until one of them ends it.
    async fn run(
        &self,
        mut read: FramedRead<OwnedReadHalf, LengthDelimitedCodec>,
        mut events: mpsc::UnboundedReceiver<Ev>,
        mut stops: mpsc::UnboundedReceiver<Stop>,
    ) -> Result<(), ServeError> {
        let mut events_open = true;
        loop {
            tokio::select! {
                Some(stop) = stops.recv() => return match stop {
                    Stop::HungUp(id) => {
                        tracing::warn!(id, "runner wire: hanging up without answering (test hook)");
                        Ok(())
                    }
                    Stop::Failed(e) => Err(e),
                },
                event = events.recv(), if events_open => match event {
                    Some(event) => self.event(event),
                    None => events_open = false,
                },
                frame = read.next() => match frame {
                    None => return Ok(()),
                    Some(Err(e)) => return Err(e.into()),
                    Some(Ok(bytes)) => self.frame(&bytes)?,
                },
            }
        }
    }

    fn frame(&self, bytes: &[u8]) -> Result<(), ServeError> {
        let frame =
            decode::<Req, Resp, Ev>(bytes).map_err(|e| ServeError::Decode(e.to_string()))?;
        match frame {
            Frame::Request { id, deadline_ms, body } => self.start(id, deadline_ms, body),
            Frame::Cancel { id } => {
                if let Some(cancelled) = lock(&self.shared.running).get(&id) {
                    cancelled.cancel();
                }
            }
            Frame::Replay { id } => self.replay(id)?,
            other => return Err(ServeError::Unexpected(other.kind())),
        }
        Ok(())
    }

    /// Starts `body` as its own task, which answers (and keeps the answer) when it is done.
    fn start(&self, id: u64, deadline_ms: u64, body: Req) {
        let now = Instant::now();
        // A deadline past what `Instant` can hold is no deadline at all: a year stands for it.
        let deadline = now
            .checked_add(Duration::from_millis(deadline_ms))
            .or_else(|| now.checked_add(Duration::from_secs(365 * 24 * 3600)))
            .unwrap_or(now);
        let cancelled = Cancelled::default();
        lock(&self.shared.running).insert(id, cancelled.clone());
        let hang_up = self.hang_up.as_ref().is_some_and(|hook| hook(&body));
        let work = (self.handler)(body, deadline, cancelled);
        let shared = Arc::clone(&self.shared);
        tokio::spawn(async move {
            let answer = work.await;
            lock(&shared.running).remove(&id);
            if hang_up {
                let _ = shared.stop.send(Stop::HungUp(id));
                return;
            }
            finish::<Req, Resp, Ev>(&shared, id, answer);
        });
    }

    fn replay(&self, id: u64) -> Result<(), ServeError> {
        let kept =
            lock(&self.shared.answers).iter().find(|(kept, _)| *kept == id).map(|(_, b)| b.clone());
        let bytes = match kept {
            Some(bytes) => bytes,
            None => encode(&Frame::<Req, Resp, Ev>::NoReplay { id })
                .map_err(|e| ServeError::Encode { frame: "NoReplay", reason: e.to_string() })?,
        };
        // A closed queue means the writer failed, which the loop hears about from `stops`.
        let _ = self.shared.out.send(bytes);
        Ok(())
    }

    fn event(&self, event: Ev) {
        match encode(&Frame::<Req, Resp, Ev>::Event(event)) {
            Ok(bytes) => {
                let _ = self.shared.out.send(bytes);
            }
            // Nobody waits for an event, so one that cannot be sent is logged and dropped.
            Err(e) => tracing::error!(error = %e, "runner wire: event dropped"),
        }
    }
}

/// Keeps and writes the answer to `id`; one that cannot be encoded ends the connection.
fn finish<Req: Payload, Resp: Payload, Ev: Payload>(shared: &Shared, id: u64, answer: Resp) {
    match encode(&Frame::<Req, Resp, Ev>::Response { id, body: answer }) {
        Ok(bytes) => {
            // Kept before it is written, so a replay that follows the answer always finds it.
            {
                let mut answers = lock(&shared.answers);
                if answers.len() >= REPLAY_RESPONSES {
                    answers.pop_front();
                }
                answers.push_back((id, bytes.clone()));
            }
            let _ = shared.out.send(bytes);
        }
        Err(EncodeError::TooLarge(bytes)) => {
            let _ = shared.stop.send(Stop::Failed(ServeError::TooLarge { id, bytes }));
        }
        Err(EncodeError::Serialize(e)) => {
            let reason = e.to_string();
            let _ =
                shared.stop.send(Stop::Failed(ServeError::Encode { frame: "Response", reason }));
        }
    }
}

/// Every guarded value here stays consistent across a panic (each change is one operation).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
