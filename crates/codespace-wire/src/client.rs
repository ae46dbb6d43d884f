//! The gateway's end of the worker socket: [`Client`] numbers requests, waits for their
//! answers with a deadline, and says exactly how a call failed: not sent (nothing ran), or
//! sent and unanswered (it may have run).

mod state;
mod tasks;

use std::collections::HashMap;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::bytes::Bytes;
use tokio_util::sync::CancellationToken;

use super::handshake::{self, HANDSHAKE_TIMEOUT};
use super::{EncodeError, Frame, MAX_FRAME_BYTES, Payload, encode, framed_read, framed_write};
use state::{Inner, Outgoing, Progress, State, Waiting};

/// How long [`Client::replay`] waits: the worker answers a replay from memory, at once.
const REPLAY_DEADLINE: Duration = Duration::from_secs(30);

/// Why the handshake with the worker failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The worker is another build, on another protocol.
    #[error(
        "the runner worker speaks protocol {theirs} (build {their_build}), this server speaks \
         {ours}: start the worker from the same build"
    )]
    Mismatch { ours: u32, theirs: u32, their_build: String },
    #[error("runner worker socket: {0}")]
    Io(#[from] std::io::Error),
    /// The worker closed the connection before it answered.
    #[error("the runner worker closed the connection before answering the handshake")]
    Closed,
    #[error("the runner worker did not answer the handshake within {HANDSHAKE_TIMEOUT:?}")]
    Timeout,
    /// The worker refused for another reason than the protocol.
    #[error("the runner worker refused the connection: {0}")]
    Refused(String),
    /// The worker's answer is not a handshake frame (it may not be a runner worker).
    #[error("the runner worker's handshake answer is not one: {0}")]
    Unexpected(String),
}

/// Why a call has no answer. Exactly one of: nothing was sent ([`NotSent`], [`TooLarge`]),
/// or the request was (perhaps partly) sent and may have run ([`Ambiguous`], [`Timeout`]).
///
/// [`NotSent`]: CallError::NotSent
/// [`TooLarge`]: CallError::TooLarge
/// [`Ambiguous`]: CallError::Ambiguous
/// [`Timeout`]: CallError::Timeout
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// Not one byte of the request was written: the worker cannot have run it.
    #[error("the request was not sent to the runner worker: {reason}")]
    NotSent { reason: String },
    /// The request was written, at least in part, and the connection was lost before the
    /// answer came.
    #[error(
        "the runner worker connection was lost after the request was sent (it may have run): {reason}"
    )]
    Ambiguous { reason: String },
    /// The request was written and no answer came in time; the worker was asked to stop it.
    #[error("the runner worker did not answer within {after:?} (the request may have run)")]
    Timeout { after: Duration },
    /// The request encodes to more than [`MAX_FRAME_BYTES`]; it was not sent.
    #[error(
        "the request encodes to {bytes} bytes, over the {MAX_FRAME_BYTES}-byte frame cap: not sent"
    )]
    TooLarge { bytes: usize },
}

impl CallError {
    /// Whether the worker may have run the request (and so its effects may be on disk).
    pub fn may_have_run(&self) -> bool {
        match self {
            CallError::Ambiguous { .. } | CallError::Timeout { .. } => true,
            CallError::NotSent { .. } | CallError::TooLarge { .. } => false,
        }
    }
}

impl From<EncodeError> for CallError {
    fn from(e: EncodeError) -> Self {
        match e {
            EncodeError::TooLarge(bytes) => CallError::TooLarge { bytes },
            EncodeError::Serialize(e) => {
                CallError::NotSent { reason: format!("the request does not encode: {e}") }
            }
        }
    }
}

/// The gateway's connection to one worker. Clones share it; the connection closes when the
/// last clone is dropped or the worker goes away (then [`Client::closed`] resolves).
pub struct Client<Req, Resp, Ev> {
    handle: Arc<Handle<Resp>>,
    types: PhantomData<fn(Req) -> Ev>,
}

impl<Req, Resp, Ev> Clone for Client<Req, Resp, Ev> {
    fn clone(&self) -> Self {
        Client { handle: Arc::clone(&self.handle), types: PhantomData }
    }
}

impl<Req, Resp, Ev> std::fmt::Debug for Client<Req, Resp, Ev> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("closed", &self.handle.inner.lost.is_cancelled()).finish()
    }
}

/// Owned by the clients only (the tasks hold [`Inner`]), so that dropping the last client
/// ends the tasks and closes the socket.
struct Handle<Resp> {
    inner: Arc<Inner<Resp>>,
}

impl<Resp> Drop for Handle<Resp> {
    fn drop(&mut self) {
        self.inner.close();
    }
}

impl<Req: Payload, Resp: Payload, Ev: Payload> Client<Req, Resp, Ev> {
    /// Says hello over `stream` and starts the connection's reader task. The
    /// receiver gets the worker's events, in order.
    pub async fn connect(
        stream: UnixStream,
        build: &str,
    ) -> Result<(Self, mpsc::UnboundedReceiver<Ev>), HandshakeError> {
        let (read, write) = stream.into_split();
        let (mut read, mut write) = (framed_read(read), framed_write(write));
        handshake::hello::<Req, Resp, Ev, _, _>(&mut read, &mut write, build).await?;
        let (events, events_rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            next_id: AtomicU64::new(1),
            sink: Arc::new(tokio::sync::Mutex::new(write)),
            state: Mutex::new(State { calls: HashMap::new(), replays: HashMap::new(), lost: None }),
            lost: CancellationToken::new(),
        });
        tokio::spawn(tasks::read_loop::<Req, Resp, Ev>(Arc::clone(&inner), read, events));
        Ok((Client { handle: Arc::new(Handle { inner }), types: PhantomData }, events_rx))
    }

    /// Sends `body` and waits up to `deadline` for its answer.
    pub async fn call(&self, body: Req, deadline: Duration) -> Result<Resp, CallError> {
        self.call_with_id(body, deadline, std::future::pending()).await.1
    }

    /// Like [`Client::call`], but once `cancelled` resolves the worker is asked to stop, and
    /// the (now early, perhaps partial) answer is still awaited until the deadline.
    pub async fn call_cancellable(
        &self,
        body: Req,
        deadline: Duration,
        cancelled: impl Future<Output = ()>,
    ) -> Result<Resp, CallError> {
        self.call_with_id(body, deadline, cancelled).await.1
    }

    /// [`Client::call_cancellable`] that also returns the request's id, for
    /// [`Client::replay`].
    pub async fn call_with_id(
        &self,
        body: Req,
        deadline: Duration,
        cancelled: impl Future<Output = ()>,
    ) -> (u64, Result<Resp, CallError>) {
        let inner = &self.handle.inner;
        let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
        let deadline_ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
        let frame = Frame::<Req, Resp, Ev>::Request { id, deadline_ms, body };
        let bytes = match encode(&frame) {
            Ok(bytes) => bytes,
            Err(e) => return (id, Err(e.into())),
        };
        let answer = match inner.register(id) {
            Ok(answer) => answer,
            Err(e) => return (id, Err(e)),
        };
        (id, self.exchange(Waiting::Call(id), bytes, answer, deadline, cancelled).await)
    }

    /// Asks the worker for its answer to `id` again (on this connection: the worker keeps the
    /// last [`super::REPLAY_RESPONSES`] answers); `None` when it no longer has it.
    pub async fn replay(&self, id: u64) -> Result<Option<Resp>, CallError> {
        let inner = &self.handle.inner;
        let bytes = encode(&Frame::<Req, Resp, Ev>::Replay { id })?;
        let (tx, answer) = oneshot::channel();
        {
            let mut state = inner.lock();
            if let Some(reason) = &state.lost {
                return Err(CallError::NotSent { reason: reason.clone() });
            }
            state.replays.entry(id).or_default().push_back(tx);
        }
        let never = std::future::pending();
        self.exchange(Waiting::Replay(id), bytes, answer, REPLAY_DEADLINE, never).await
    }

    /// Resolves once the connection is lost (the worker closed it or failed, or it could not
    /// be read or written). From then on every call is [`CallError::NotSent`].
    pub fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        let lost = self.handle.inner.lost.clone();
        async move { lost.cancelled().await }
    }

    /// Why the connection was lost, once it is.
    pub fn close_reason(&self) -> Option<String> {
        self.handle.inner.lock().lost.clone()
    }

    /// Writes `bytes` (its turn on the write half) and waits for `answer`, classifying every
    /// way it can end.
    async fn exchange<T>(
        &self,
        waiting: Waiting,
        bytes: Bytes,
        mut answer: oneshot::Receiver<T>,
        deadline: Duration,
        cancelled: impl Future<Output = ()>,
    ) -> Result<T, CallError> {
        let progress = Progress::new();
        if let Some(reason) = self.handle.inner.lock().lost.clone() {
            self.handle.inner.forget(waiting);
            return Err(CallError::NotSent { reason });
        }
        self.handle.inner.send(Outgoing { bytes, progress: Some(Arc::clone(&progress)) });
        let mut guard = GiveUp { client: self, waiting, progress, cancel_sent: false, armed: true };
        let mut timer = pin!(tokio::time::sleep(deadline));
        let mut cancelled = pin!(cancelled);
        loop {
            tokio::select! {
                got = &mut answer => {
                    guard.armed = false;
                    return got.map_err(|_| self.handle.inner.lost_error(&guard.progress));
                }
                // The guard forgets the caller and cancels a request that was sent.
                () = &mut timer => return Err(if guard.progress.abandon() {
                    let reason = format!("the deadline ({deadline:?}) passed before it was written");
                    CallError::NotSent { reason }
                } else {
                    CallError::Timeout { after: deadline }
                }),
                () = &mut cancelled, if !guard.cancel_sent => {
                    if guard.progress.abandon() {
                        let reason = "the caller gave up before it was written".to_owned();
                        return Err(CallError::NotSent { reason });
                    }
                    guard.cancel();
                }
            }
        }
    }

    /// Tells the worker the caller gave up on a request (best effort: a lost connection
    /// cancels everything anyway).
    fn cancel(&self, waiting: Waiting) {
        let Waiting::Call(id) = waiting else { return };
        match encode(&Frame::<Req, Resp, Ev>::Cancel { id }) {
            Ok(bytes) => {
                self.handle.inner.send(Outgoing { bytes, progress: None });
            }
            Err(e) => tracing::warn!(id, error = %e, "runner wire: cancel frame not encoded"),
        }
    }
}

/// A caller that stops waiting (its deadline passed, or its future was dropped) is
/// forgotten, its unsent frame is skipped, and a sent request is cancelled on the worker.
struct GiveUp<'a, Req: Payload, Resp: Payload, Ev: Payload> {
    client: &'a Client<Req, Resp, Ev>,
    waiting: Waiting,
    progress: Arc<Progress>,
    cancel_sent: bool,
    /// Cleared once the answer (or the connection's loss) settled the call.
    armed: bool,
}

impl<Req: Payload, Resp: Payload, Ev: Payload> GiveUp<'_, Req, Resp, Ev> {
    fn cancel(&mut self) {
        if !self.cancel_sent {
            self.cancel_sent = true;
            self.client.cancel(self.waiting);
        }
    }
}

impl<Req: Payload, Resp: Payload, Ev: Payload> Drop for GiveUp<'_, Req, Resp, Ev> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.client.handle.inner.forget(self.waiting);
        if !self.progress.abandon() && self.progress.started() {
            self.cancel();
        }
    }
}
