//! What crosses the worker's socket: one [`Request`] per job (its [`Op`] and the job's own
//! encoding), the worker's [`Reply`] (the job's answer in its own encoding, so it decodes
//! straight into the job's answer type), and the worker's [`Event`]s.

use serde::{Deserialize, Serialize};

use crate::RunnerError;
use crate::Transport;
use crate::ops::{Failed, Job, Op};

/// A request to the worker.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub(crate) op: Op,
    /// For a walk, the token its progress events name (0 otherwise).
    pub(crate) walk: u64,
    /// The job, encoded as its own type.
    #[serde(with = "serde_bytes")]
    pub(crate) body: Vec<u8>,
}

/// The worker's answer to a [`Request`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// The job's answer, encoded as its own type.
    Answer(#[serde(with = "serde_bytes")] Vec<u8>),
    /// The request does not fit this worker's state (a second `Open`, or a job before it),
    /// or could not be run at all.
    Refused(String),
}

/// What the worker says unasked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Event {
    /// The process and its whole tree are gone: the gateway releases its lease.
    ProcessExited { id: String },
    /// How far a walk or search of the call with this progress token has come.
    Progress { token: u64, entries: u64, files_searched: u64 },
}

impl Request {
    /// `job` as a request (`walk`: its progress token, or 0).
    pub(crate) fn of<J: Job>(job: &J, walk: u64) -> Result<Request, Transport> {
        let body = postcard::to_stdvec(job).map_err(|e| Transport::NotSent {
            reason: format!("the request does not encode: {e}"),
        })?;
        Ok(Request { op: J::OP, walk, body })
    }
}

impl Reply {
    /// `answer`, encoded for the wire.
    pub(crate) fn of<T: Serialize>(answer: &T) -> Reply {
        match postcard::to_stdvec(answer) {
            Ok(bytes) => Reply::Answer(bytes),
            Err(e) => Reply::Refused(format!("the answer does not encode: {e}")),
        }
    }

    /// The answer of job `J`, or the runner error that says why there is none.
    pub(crate) fn answer<J: Job>(
        reply: Result<Reply, Transport>,
    ) -> Result<J::Answer, RunnerError> {
        let bytes = match reply {
            Ok(Reply::Answer(bytes)) => bytes,
            Ok(Reply::Refused(why)) => {
                return Err(RunnerError::Task {
                    reason: format!("the runner worker refused: {why}"),
                });
            }
            Err(transport) => return Err(RunnerError::Transport(transport)),
        };
        postcard::from_bytes(&bytes).map_err(|e| RunnerError::Task {
            reason: format!("the runner worker's answer does not decode as {:?}'s: {e}", J::OP),
        })
    }

    /// [`Reply::answer`], a failure folded into the job's own answer.
    pub(crate) fn unpack<J: Job>(reply: Result<Reply, Transport>) -> J::Answer
    where
        J::Answer: Failed,
    {
        Reply::answer::<J>(reply).unwrap_or_else(Failed::failed)
    }
}
