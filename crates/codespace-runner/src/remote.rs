//! The runner behind a Unix socket: what crosses it ([`messages`]: a request per job, its
//! answer, the worker's events), the worker that serves it on its own
//! [`crate::LocalRunner`] ([`worker`]), and the gateway's client ([`client`], [`run`]) that
//! classifies every socket failure.

mod client;
mod messages;
mod run;
mod worker;

pub use client::{CALL_DEADLINE, ConnectError, SocketRunner};
pub(crate) use messages::Reply;
pub(crate) use worker::Worker;
pub use worker::{WelcomedGateway, WorkerFaults, serve_gateway, serve_worker, welcome_gateway};
