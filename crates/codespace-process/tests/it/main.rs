//! Integration tests of `codespace-process`: real processes through the real reaper shim
//! (`examples/reaper.rs`). Case ids (R1, R2, R4, R7, R8) refer to the security catalogue.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside #[test] fns panic on setup failure by design, like the tests themselves"
)]

mod basics;
mod flood;
mod grace;
mod helper;
mod lifecycle;
mod namespaces;
mod pty;
mod sandbox;
mod spill;
mod stdin;
mod support;
