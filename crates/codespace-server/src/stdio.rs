//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout, framed here rather
//! than by rmcp so that every malformed line is answered (see `frame`) instead of being
//! dropped while the client waits. Lines are bounded; stdout is written by one task, so a
//! reply queued while reading is never interleaved with another. A pipe or a stream socket
//! (what MCP clients give a server they start) is read and written through the runtime's
//! poller, not tokio's blocking-thread `Stdin`/`Stdout`, which cost two thread hand-offs
//! per message. A stdout pipe is widened before the first reply it could not hold, so that
//! a large reply is written in one go.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::frame::{self, INVALID_REQUEST, Verdict};

/// The longest line accepted, in bytes: the same cap as an HTTP request body.
pub(crate) const MAX_LINE_BYTES: usize = crate::http::MAX_BODY_BYTES;

/// The capacity asked for a stdout pipe: Linux's default ceiling for an unprivileged
/// process (`fs.pipe-max-size`), and the size of a whole `read` window. With the default
/// 64 KiB, a 256 KiB `read_process` reply is written in five rounds, each waiting for the
/// client to make room, and each a pair of context switches. A pipe's capacity counts
/// against its user's pipe quota (`fs.pipe-user-pages-soft`, 64 MiB by default) while it
/// exists, so only a session that sends a reply larger than the pipe pays for it.
pub(crate) const STDOUT_PIPE_BYTES: usize = 1 << 20;

type Input = Pin<Box<dyn AsyncRead + Send>>;
type Output = Pin<Box<dyn AsyncWrite + Send>>;

pub(crate) struct Stdio {
    reader: BufReader<Input>,
    /// The line being read; kept across a cancelled `receive`.
    line: Vec<u8>,
    /// Skipping the rest of an over-long line.
    discarding: bool,
    /// A message that opens the session has been forwarded.
    open: bool,
    /// The same, for whoever serves this transport once it is gone (see [`Opened`]).
    opened: Opened,
    out: mpsc::UnboundedSender<Vec<u8>>,
}

/// The status flags of stdin and stdout as the server found them: the poller makes their
/// open file descriptions non-blocking, and those are shared with whoever started the
/// server (a wrapper script that writes after it, a parent that reads the same stdin).
pub(crate) struct Modes {
    stdin: Option<rustix::fs::OFlags>,
    stdout: Option<rustix::fs::OFlags>,
}

impl Modes {
    fn now() -> Modes {
        Modes {
            stdin: rustix::fs::fcntl_getfl(io::stdin()).ok(),
            stdout: rustix::fs::fcntl_getfl(io::stdout()).ok(),
        }
    }

    /// Puts the flags back. Only once the transport is gone and the writer has finished:
    /// a blocking descriptor under the poller would block a runtime thread.
    pub(crate) fn restore(self) {
        if let Some(flags) = self.stdin {
            let _ = rustix::fs::fcntl_setfl(io::stdin(), flags);
        }
        if let Some(flags) = self.stdout {
            let _ = rustix::fs::fcntl_setfl(io::stdout(), flags);
        }
    }
}

/// Whether a client ever opened the session on this transport: a stdin that ends before
/// then had no MCP client behind it (a person who ran the command at a terminal, say).
#[derive(Clone, Default)]
pub(crate) struct Opened(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Opened {
    pub(crate) fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The transport, the task that writes stdout, and the flags to put back after both. The
/// task ends with `true` once the transport is dropped (so nothing reads stdin any more)
/// and every queued frame is written; with `false` when stdout failed first.
pub(crate) fn transport() -> (Stdio, JoinHandle<bool>, Modes) {
    let modes = Modes::now();
    let (out, mut frames) = mpsc::unbounded_channel::<Vec<u8>>();
    let (mut stdout, mut widener) = output();
    let writer = tokio::spawn(async move {
        while let Some(frame) = frames.recv().await {
            widener.before(frame.len());
            if stdout.write_all(&frame).await.is_err() || stdout.flush().await.is_err() {
                return false;
            }
        }
        true
    });
    let reader = BufReader::new(input());
    let opened = Opened::default();
    (Stdio { reader, line: Vec::new(), discarding: false, open: false, opened, out }, writer, modes)
}

/// What a standard stream is, for choosing how to wait on it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Pipe,
    Socket,
    /// A file, a terminal, `/dev/null`: read and written on blocking threads.
    Other,
}

fn kind(fd: BorrowedFd<'_>) -> Kind {
    let Ok(stat) = rustix::fs::fstat(fd) else { return Kind::Other };
    match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
        rustix::fs::FileType::Fifo => Kind::Pipe,
        rustix::fs::FileType::Socket
            if rustix::net::sockopt::socket_type(fd).ok()
                == Some(rustix::net::SocketType::STREAM) =>
        {
            Kind::Socket
        }
        _ => Kind::Other,
    }
}

/// A socket descriptor as a tokio stream. Unix-domain or not, a connected stream socket is
/// read and written the same way.
fn stream(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// A standard stream through the poller when it is a pipe or a socket (`pipe`, `socket`),
/// else, or when that fails, through the blocking pool (`fallback`).
fn polled<T>(
    name: &str,
    fd: BorrowedFd<'_>,
    pipe: impl FnOnce(OwnedFd) -> io::Result<T>,
    socket: impl FnOnce(tokio::net::UnixStream) -> T,
    fallback: impl FnOnce() -> T,
) -> T {
    let kind = kind(fd);
    tracing::debug!("{name} is {kind:?}");
    let opened = match kind {
        Kind::Pipe => fd.try_clone_to_owned().and_then(pipe),
        Kind::Socket => fd.try_clone_to_owned().and_then(stream).map(socket),
        Kind::Other => return fallback(),
    };
    opened.unwrap_or_else(|e| {
        tracing::debug!("{name} through the blocking pool: {e}");
        fallback()
    })
}

fn input() -> Input {
    polled::<Input>(
        "stdin",
        io::stdin().as_fd(),
        |fd| Ok(Box::pin(pipe::Receiver::from_owned_fd(fd)?)),
        |s| Box::pin(s),
        || Box::pin(tokio::io::stdin()),
    )
}

/// Stdout, and what widens it when it is a pipe.
fn output() -> (Output, Widener) {
    let mut widener = Widener(None);
    let stdout = polled::<Output>(
        "stdout",
        io::stdout().as_fd(),
        |fd| {
            widener = Widener::of(&fd);
            Ok(Box::pin(pipe::Sender::from_owned_fd(fd)?))
        },
        |s| Box::pin(s),
        || Box::pin(tokio::io::stdout()),
    );
    (stdout, widener)
}

/// Widens a stdout pipe to [`STDOUT_PIPE_BYTES`] before the first frame it cannot hold;
/// never shrinks it. Best effort: over the system's ceiling or the user's pipe quota the
/// pipe keeps its size, and nothing is tried again. Holds a duplicate of the pipe and its
/// capacity while it may still be widened.
struct Widener(Option<(OwnedFd, usize)>);

impl Widener {
    fn of(pipe: &OwnedFd) -> Widener {
        let capacity = rustix::pipe::fcntl_getpipe_size(pipe).ok();
        match (pipe.try_clone(), capacity) {
            (Ok(dup), Some(capacity)) if capacity < STDOUT_PIPE_BYTES => {
                Widener(Some((dup, capacity)))
            }
            _ => Widener(None),
        }
    }

    fn before(&mut self, frame: usize) {
        let Some((pipe, capacity)) = self.0.take_if(|(_, capacity)| frame > *capacity) else {
            return;
        };
        match rustix::pipe::fcntl_setpipe_size(&pipe, STDOUT_PIPE_BYTES) {
            Ok(size) => tracing::debug!("stdout pipe widened from {capacity} to {size} bytes"),
            Err(e) => tracing::debug!("stdout pipe kept at {capacity} bytes: {e}"),
        }
    }
}

enum Line {
    Whole,
    TooLong,
    Eof,
}

impl Stdio {
    /// Tells, after the transport is gone, whether a client opened the session.
    pub(crate) fn opened(&self) -> Opened {
        self.opened.clone()
    }

    fn queue(&self, value: &Value) {
        let mut frame = value.to_string().into_bytes();
        frame.push(b'\n');
        // The writer is gone only when stdout is closed: nobody is left to answer.
        let _ = self.out.send(frame);
    }

    /// Reads up to the next newline without holding more than the cap. Cancel-safe: bytes
    /// are moved into `self.line` and consumed with no await in between.
    async fn read_line(&mut self) -> io::Result<Line> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut outcome = None;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.line.len() + take > MAX_LINE_BYTES + 1 {
                self.line.clear();
                self.discarding = newline.is_none();
                outcome = Some(Line::TooLong);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    outcome = Some(Line::Whole);
                }
            }
            self.reader.consume(take);
            if let Some(line) = outcome {
                return Ok(line);
            }
        }
    }

    /// Decides about one whole line: a message for rmcp, or None once it is answered.
    fn take_line(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let bytes = std::mem::take(&mut self.line);
        let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let value = match frame::parse(text) {
            Ok(value) => value,
            Err(answer) => {
                self.queue(&answer);
                return None;
            }
        };
        // A message of the wrong shape gets its answer whether or not a session is open.
        if let Some(verdict) = frame::misshapen(&value) {
            if let Verdict::Answer(answer) = verdict {
                self.queue(&answer);
            }
            return None;
        }
        if !self.open {
            if !frame::allowed_before_initialize(&value) {
                // rmcp ends the session on anything else first; answer or drop it instead.
                if let Some(answer) = frame::not_initialized(&value) {
                    self.queue(&answer);
                }
                return None;
            }
            self.open = value.get("method").and_then(Value::as_str) != Some("ping");
            self.opened.0.store(self.open, std::sync::atomic::Ordering::Relaxed);
        }
        match frame::check(value) {
            Verdict::Forward(message) => Some(*message),
            Verdict::Answer(answer) => {
                self.queue(&answer);
                None
            }
            Verdict::Drop => None,
        }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = self.out.clone();
        let frame = serde_json::to_vec(&item);
        async move {
            let mut frame = frame.map_err(io::Error::other)?;
            frame.push(b'\n');
            out.send(frame).map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(Line::Whole) => {
                    if let Some(message) = self.take_line() {
                        return Some(message);
                    }
                }
                Ok(Line::TooLong) => {
                    let message = format!(
                        "Invalid Request: a message is at most {MAX_LINE_BYTES} bytes; this line was longer and was skipped"
                    );
                    self.queue(&frame::error(None, INVALID_REQUEST, &message));
                }
                Ok(Line::Eof) => return None,
                Err(e) => {
                    tracing::debug!("stdin: {e}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        Ok(())
    }
}
