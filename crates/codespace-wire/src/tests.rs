//! The wire over real socket pairs: the handshake, concurrent calls, events, deadlines and
//! cancellation, hang-ups, a closed peer, replay, the frame cap and the end of serving.

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::handshake::{parse_refusal, refusal};
use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Req {
    Echo(u32),
    /// Answers `tag` after `ms`.
    Sleep {
        ms: u64,
        tag: u32,
    },
    /// Waits for its cancellation (10 s at most), then says whether it came.
    AwaitCancel,
    /// Answers how many requests the worker has run, this one included.
    Count,
    /// Answers the length of its text.
    Big(String),
    /// Answers `n` bytes of text.
    Huge(usize),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Resp {
    Echo(u32),
    Slept(u32),
    Cancelled(bool),
    Count(u32),
    Len(usize),
    Text(String),
}

type Ev = u32;
type TestClient = Client<Req, Resp, Ev>;
type TestFrame = Frame<Req, Resp, Ev>;

const LONG: Duration = Duration::from_secs(10);

/// What the worker's handler saw.
struct Probe {
    runs: AtomicU32,
    cancels: mpsc::UnboundedSender<bool>,
}

async fn handle(probe: Arc<Probe>, req: Req, _deadline: Deadline, cancelled: Cancelled) -> Resp {
    let run = probe.runs.fetch_add(1, Ordering::SeqCst) + 1;
    match req {
        Req::Echo(n) => Resp::Echo(n),
        Req::Sleep { ms, tag } => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Resp::Slept(tag)
        }
        Req::AwaitCancel => {
            let seen = tokio::time::timeout(LONG, cancelled.cancelled()).await.is_ok();
            probe.cancels.send(seen).unwrap();
            Resp::Cancelled(seen)
        }
        Req::Count => Resp::Count(run),
        Req::Big(text) => Resp::Len(text.len()),
        Req::Huge(n) => Resp::Text("y".repeat(n)),
    }
}

struct Pair {
    client: TestClient,
    events: mpsc::UnboundedReceiver<Ev>,
    emit: mpsc::UnboundedSender<Ev>,
    worker: JoinHandle<Result<(), ServeError>>,
    probe: Arc<Probe>,
    cancels: mpsc::UnboundedReceiver<bool>,
}

/// A worker serving one end of a socket pair, and a client connected to the other.
async fn pair(opts: ServeOptions<Req>) -> Pair {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let (emit, emitted) = mpsc::unbounded_channel();
    let (cancels_tx, cancels) = mpsc::unbounded_channel();
    let probe = Arc::new(Probe { runs: AtomicU32::new(0), cancels: cancels_tx });
    let seen = Arc::clone(&probe);
    let handler =
        move |req, deadline, cancelled| handle(Arc::clone(&seen), req, deadline, cancelled);
    let worker = tokio::spawn(serve(theirs, opts, handler, emitted));
    let (client, events) = TestClient::connect(ours, "client-build").await.unwrap();
    Pair { client, events, emit, worker, probe, cancels }
}

async fn within<T>(what: impl Future<Output = T>) -> T {
    tokio::time::timeout(LONG, what).await.expect("this should have happened by now")
}

type RawRead =
    tokio_util::codec::FramedRead<OwnedReadHalf, tokio_util::codec::LengthDelimitedCodec>;
type RawWrite =
    tokio_util::codec::FramedWrite<OwnedWriteHalf, tokio_util::codec::LengthDelimitedCodec>;

/// One end of a socket that a test drives frame by frame.
fn raw(stream: UnixStream) -> (RawRead, RawWrite) {
    let (read, write) = stream.into_split();
    (framed_read(read), framed_write(write))
}

async fn send_raw(write: &mut RawWrite, frame: TestFrame) {
    write.send(encode(&frame).unwrap()).await.unwrap();
}

async fn recv_raw(read: &mut RawRead) -> TestFrame {
    decode(&within(read.next()).await.unwrap().unwrap()).unwrap()
}

#[tokio::test]
async fn handshake_then_a_call_is_answered() {
    let p = pair(ServeOptions::new("worker-build")).await;
    assert_eq!(p.client.call(Req::Echo(3), LONG).await, Ok(Resp::Echo(3)));
}

#[tokio::test]
async fn a_worker_on_another_protocol_refuses_and_both_sides_name_both_versions() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut opts = ServeOptions::new("worker-b");
    opts.protocol = PROTOCOL + 1;
    let handler = |_: Req, _: Deadline, _: Cancelled| async { Resp::Echo(0) };
    let worker = tokio::spawn(serve::<Req, Resp, Ev, _, _>(
        theirs,
        opts,
        handler,
        mpsc::unbounded_channel().1,
    ));
    let err = TestClient::connect(ours, "client-a").await.unwrap_err();
    let HandshakeError::Mismatch { ours, theirs, their_build } = &err else { panic!("{err:?}") };
    assert_eq!((*ours, *theirs, their_build.as_str()), (PROTOCOL, PROTOCOL + 1, "worker-b"));
    let text = err.to_string();
    assert!(text.contains(&format!("protocol {}", PROTOCOL + 1)), "{text}");
    assert!(text.contains(&format!("speaks {PROTOCOL}")), "{text}");
    let served = within(worker).await.unwrap().unwrap_err();
    let ServeError::Mismatch { ours, theirs, .. } = &served else { panic!("{served:?}") };
    assert_eq!((*ours, *theirs), (PROTOCOL + 1, PROTOCOL));
    let text = served.to_string();
    assert!(
        text.contains(&format!("protocol {PROTOCOL}"))
            && text.contains(&format!("speaks {}", PROTOCOL + 1)),
        "{text}"
    );
}

#[tokio::test]
async fn a_welcome_on_another_protocol_is_a_mismatch() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let fake = tokio::spawn(async move {
        let (mut read, mut write) = raw(theirs);
        assert!(matches!(recv_raw(&mut read).await, Frame::Hello { protocol: PROTOCOL, .. }));
        send_raw(&mut write, Frame::Welcome { protocol: 9, build: "old".to_owned() }).await;
    });
    let err = TestClient::connect(ours, "new").await.unwrap_err();
    assert!(matches!(&err, HandshakeError::Mismatch { theirs: 9, .. }), "{err:?}");
    fake.await.unwrap();
}

#[test]
fn a_refusal_names_the_workers_version_in_a_form_the_client_reads_back() {
    let reason = refusal(2, "w (x)", 1, "c");
    assert_eq!(parse_refusal(&reason), Some((2, "w (x)".to_owned())));
    assert_eq!(parse_refusal("the worker is shutting down"), None);
}

#[tokio::test(start_paused = true)]
async fn concurrent_calls_answered_out_of_order_reach_their_callers() {
    let p = pair(ServeOptions::new("w")).await;
    let order = Mutex::new(Vec::new());
    let finish = |tag: u32, ms: u64| {
        let (client, order) = (&p.client, &order);
        async move {
            let answer = client.call(Req::Sleep { ms, tag }, LONG).await;
            order.lock().unwrap().push(tag);
            answer
        }
    };
    let (slow, fast) = tokio::join!(finish(1, 600), finish(2, 0));
    assert_eq!((slow, fast), (Ok(Resp::Slept(1)), Ok(Resp::Slept(2))));
    assert_eq!(*order.lock().unwrap(), [2, 1], "the short request must not wait for the long one");
}

#[tokio::test]
async fn an_event_reaches_the_client() {
    let mut p = pair(ServeOptions::new("w")).await;
    p.emit.send(7).unwrap();
    assert_eq!(within(p.events.recv()).await, Some(7));
}

#[tokio::test(start_paused = true)]
async fn a_missed_deadline_is_a_timeout_and_the_worker_sees_the_cancel() {
    let mut p = pair(ServeOptions::new("w")).await;
    let after = Duration::from_millis(200);
    let err = p.client.call(Req::AwaitCancel, after).await.unwrap_err();
    assert_eq!(err, CallError::Timeout { after });
    assert!(err.may_have_run());
    assert_eq!(within(p.cancels.recv()).await, Some(true));
    assert_eq!(p.client.call(Req::Echo(1), LONG).await, Ok(Resp::Echo(1)));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_still_gets_the_early_answer() {
    let mut p = pair(ServeOptions::new("w")).await;
    let gave_up = tokio::time::sleep(Duration::from_millis(100));
    let started = tokio::time::Instant::now();
    let answer = p.client.call_cancellable(Req::AwaitCancel, LONG, gave_up).await;
    assert_eq!(answer, Ok(Resp::Cancelled(true)));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(within(p.cancels.recv()).await, Some(true));
}

#[tokio::test]
async fn a_dropped_call_cancels_its_request_on_the_worker() {
    let mut p = pair(ServeOptions::new("w")).await;
    let client = p.client.clone();
    let call = tokio::spawn(async move { client.call(Req::AwaitCancel, LONG).await });
    // Dropped only once the worker runs it.
    within(async {
        while p.probe.runs.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    call.abort();
    assert_eq!(within(p.cancels.recv()).await, Some(true));
    assert_eq!(p.client.call(Req::Echo(2), LONG).await, Ok(Resp::Echo(2)));
}

#[tokio::test]
async fn a_hang_up_after_running_is_ambiguous() {
    let mut opts = ServeOptions::new("w");
    opts.hang_up = Some(Arc::new(|req: &Req| *req == Req::Count));
    let p = pair(opts).await;
    assert_eq!(p.client.call(Req::Echo(1), LONG).await, Ok(Resp::Echo(1)));
    let err = p.client.call(Req::Count, LONG).await.unwrap_err();
    assert!(matches!(err, CallError::Ambiguous { .. }), "{err:?}");
    assert!(err.may_have_run());
    assert_eq!(p.probe.runs.load(Ordering::SeqCst), 2, "the request ran before the hang-up");
    assert!(within(p.worker).await.unwrap().is_ok());
}

#[tokio::test]
async fn a_call_after_the_peer_closed_is_not_sent() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let fake = tokio::spawn(async move {
        let (mut read, mut write) = raw(theirs);
        assert!(matches!(recv_raw(&mut read).await, Frame::Hello { .. }));
        send_raw(&mut write, Frame::Welcome { protocol: PROTOCOL, build: "w".to_owned() }).await;
    });
    let (client, _events) = TestClient::connect(ours, "c").await.unwrap();
    fake.await.unwrap();
    within(client.closed()).await;
    // At once, not when the deadline passes: the connection is known to be gone.
    let prompt = Duration::from_secs(2);
    let err =
        tokio::time::timeout(prompt, client.call(Req::Echo(1), LONG)).await.unwrap().unwrap_err();
    assert!(matches!(err, CallError::NotSent { .. }), "{err:?}");
    assert!(!err.may_have_run());
    assert!(client.close_reason().is_some());
}

#[tokio::test]
async fn a_lost_connection_splits_the_frame_being_written_from_the_ones_queued_behind_it() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let (close, closing) = tokio::sync::oneshot::channel::<()>();
    let (arrived, first_bytes) = tokio::sync::oneshot::channel::<()>();
    let fake = tokio::spawn(async move {
        let (mut read, mut write) = raw(theirs);
        assert!(matches!(recv_raw(&mut read).await, Frame::Hello { .. }));
        send_raw(&mut write, Frame::Welcome { protocol: PROTOCOL, build: "w".to_owned() }).await;
        // The first request's bytes arrive; nothing more is read, so its write stalls.
        within(read.get_ref().readable()).await.unwrap();
        arrived.send(()).unwrap();
        closing.await.unwrap();
    });
    let (client, _events) = TestClient::connect(ours, "c").await.unwrap();
    let writing = tokio::spawn({
        let client = client.clone();
        async move { client.call(Req::Big("x".repeat(4 << 20)), LONG).await }
    });
    within(first_bytes).await.unwrap();
    let queued = tokio::spawn({
        let client = client.clone();
        async move { client.call(Req::Echo(1), LONG).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    close.send(()).unwrap();
    fake.await.unwrap();
    let err = within(writing).await.unwrap().unwrap_err();
    assert!(matches!(err, CallError::Ambiguous { .. }), "{err:?}");
    let err = within(queued).await.unwrap().unwrap_err();
    assert!(matches!(err, CallError::NotSent { .. }), "{err:?}");
}

#[tokio::test]
async fn a_kept_answer_replays_unchanged_and_an_unknown_id_has_none() {
    let p = pair(ServeOptions::new("w")).await;
    let (id, first) = p.client.call_with_id(Req::Count, LONG, pending()).await;
    assert_eq!(first, Ok(Resp::Count(1)));
    assert_eq!(p.client.replay(id).await, Ok(Some(Resp::Count(1))));
    assert_eq!(p.probe.runs.load(Ordering::SeqCst), 1, "a replay does not run the request again");
    assert_eq!(p.client.replay(id + 1000).await, Ok(None));
    for n in 0..REPLAY_RESPONSES {
        let n = u32::try_from(n).unwrap();
        assert_eq!(p.client.call(Req::Echo(n), LONG).await, Ok(Resp::Echo(n)));
    }
    assert_eq!(p.client.replay(id).await, Ok(None), "only the last answers are kept");
}

#[tokio::test]
async fn an_oversized_request_is_refused_and_the_connection_serves_on() {
    let p = pair(ServeOptions::new("w")).await;
    let err = p.client.call(Req::Big("x".repeat(MAX_FRAME_BYTES)), LONG).await.unwrap_err();
    let CallError::TooLarge { bytes } = err else { panic!("{err:?}") };
    assert!(bytes > MAX_FRAME_BYTES);
    assert_eq!(p.client.call(Req::Echo(5), LONG).await, Ok(Resp::Echo(5)));
    assert_eq!(p.probe.runs.load(Ordering::SeqCst), 1, "the oversized request never ran");
}

#[tokio::test]
async fn an_oversized_answer_closes_the_connection_with_a_clear_error() {
    let p = pair(ServeOptions::new("w")).await;
    let err = p.client.call(Req::Huge(MAX_FRAME_BYTES), LONG).await.unwrap_err();
    assert!(matches!(err, CallError::Ambiguous { .. }), "{err:?}");
    let served = within(p.worker).await.unwrap().unwrap_err();
    assert!(
        matches!(served, ServeError::TooLarge { bytes, .. } if bytes > MAX_FRAME_BYTES),
        "{served:?}"
    );
}

#[tokio::test]
async fn eof_from_the_client_ends_serve_with_ok() {
    let p = pair(ServeOptions::new("w")).await;
    assert_eq!(p.client.call(Req::Echo(1), LONG).await, Ok(Resp::Echo(1)));
    drop(p.client);
    assert!(within(p.worker).await.unwrap().is_ok());
}

#[tokio::test]
async fn a_frame_only_a_worker_sends_ends_serve_with_an_error() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let handler = |_: Req, _: Deadline, _: Cancelled| async { Resp::Echo(0) };
    let opts = ServeOptions::new("w");
    let worker = tokio::spawn(serve::<Req, Resp, Ev, _, _>(
        theirs,
        opts,
        handler,
        mpsc::unbounded_channel().1,
    ));
    let (mut read, mut write) = raw(ours);
    send_raw(&mut write, Frame::Hello { protocol: PROTOCOL, build: "c".to_owned() }).await;
    assert!(matches!(recv_raw(&mut read).await, Frame::Welcome { .. }));
    send_raw(&mut write, Frame::Response { id: 1, body: Resp::Echo(1) }).await;
    let served = within(worker).await.unwrap().unwrap_err();
    assert!(matches!(served, ServeError::Unexpected("Response")), "{served:?}");
}
