//! The runner behind a Unix socket: what crosses it ([`call`]: a request per job, its
//! answer, the worker's events), the worker that serves it on its own
//! [`crate::LocalRunner`] ([`worker`]), and the gateway's client ([`client`], [`jobs`]) that
//! classifies every socket failure.

mod call;
mod client;
mod jobs;
mod worker;

pub(crate) use call::Reply;
pub use client::{CALL_DEADLINE, ConnectError, SocketRunner};
pub(crate) use worker::Worker;
pub use worker::{WorkerFaults, serve_worker};
