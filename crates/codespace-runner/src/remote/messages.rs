//! What crosses the worker's socket: one [`Request`] per job (the job as [`AnyJob`], whose
//! variant is its operation), the worker's [`Reply`] (the answer as [`AnyAnswer`], taken
//! straight out as the job's answer type), and the worker's [`Event`]s. Each is encoded
//! once, inside its frame.

use serde::{Deserialize, Serialize};

use crate::RunnerError;
use crate::Transport;
use crate::ops::{AnyAnswer, AnyJob, Failed, Job};

/// A request to the worker.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    /// For a walk, the token its progress events name (0 otherwise).
    pub(crate) walk: u64,
    pub(crate) job: AnyJob,
}

/// The worker's answer to a [`Request`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// The job's answer.
    Answer(AnyAnswer),
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
    pub(crate) fn of<J: Job>(job: J, walk: u64) -> Request {
        Request { walk, job: job.into_any() }
    }
}

impl Reply {
    /// The answer of job `J`.
    pub(crate) fn of<J: Job>(answer: J::Answer) -> Reply {
        Reply::Answer(J::any_answer(answer))
    }

    /// The answer of job `J`, or the runner error that says why there is none.
    pub(crate) fn answer<J: Job>(
        reply: Result<Reply, Transport>,
    ) -> Result<J::Answer, RunnerError> {
        match reply {
            Ok(Reply::Answer(any)) => J::answer_of(any).map_err(|other| RunnerError::Task {
                reason: format!(
                    "the runner worker answered a {:?} request with a {:?} answer",
                    J::OP,
                    other.op()
                ),
            }),
            Ok(Reply::Refused(why)) => {
                Err(RunnerError::Task { reason: format!("the runner worker refused: {why}") })
            }
            Err(transport) => Err(RunnerError::Transport(transport)),
        }
    }

    /// [`Reply::answer`], a failure folded into the job's own answer.
    pub(crate) fn unpack<J: Job>(reply: Result<Reply, Transport>) -> J::Answer
    where
        J::Answer: Failed,
    {
        Reply::answer::<J>(reply).unwrap_or_else(Failed::failed)
    }
}
