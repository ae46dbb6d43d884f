//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout, framed here rather
//! than by rmcp so that every malformed line is answered (see `frame`) instead of being
//! dropped while the client waits. Lines are bounded; stdout is written by one task, so a
//! reply queued while reading is never interleaved with another.

use std::io;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Stdin};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::frame::{self, INVALID_REQUEST, Verdict};

/// The longest line accepted, in bytes: the same cap as an HTTP request body.
pub(crate) const MAX_LINE_BYTES: usize = crate::http::MAX_BODY_BYTES;

pub(crate) struct Stdio {
    reader: BufReader<Stdin>,
    /// The line being read; kept across a cancelled `receive`.
    line: Vec<u8>,
    /// Skipping the rest of an over-long line.
    discarding: bool,
    /// A message that opens the session has been forwarded.
    open: bool,
    out: mpsc::UnboundedSender<Vec<u8>>,
}

/// The transport and the task that writes stdout (it ends once the transport is dropped
/// and every queued frame is written).
pub(crate) fn transport() -> (Stdio, JoinHandle<()>) {
    let (out, mut frames) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(frame) = frames.recv().await {
            if stdout.write_all(&frame).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let reader = BufReader::new(tokio::io::stdin());
    (Stdio { reader, line: Vec::new(), discarding: false, open: false, out }, writer)
}

enum Line {
    Whole,
    TooLong,
    Eof,
}

impl Stdio {
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
        if !self.open {
            if !frame::allowed_before_initialize(&value) {
                // rmcp ends the session on anything else first; answer or drop it instead.
                if let Some(answer) = frame::not_initialized(&value) {
                    self.queue(&answer);
                }
                return None;
            }
            self.open = value.get("method").and_then(Value::as_str) != Some("ping");
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
