//! The runner behind a Unix socket: the calls that cross it ([`call`]), the worker that
//! serves them on its own [`crate::LocalRunner`] ([`worker`]), and the gateway's client
//! ([`client`], [`jobs`]) that classifies every socket failure.

mod call;
mod client;
mod jobs;
mod worker;

pub use client::{CALL_DEADLINE, ConnectError, SocketRunner};
pub use worker::{WorkerFaults, serve_worker};
