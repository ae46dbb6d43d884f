//! Integration tests of `codespace-process`: real processes through the real reaper shim
//! (`examples/reaper.rs`). Case ids (R1, R2, R4, R7, R8) refer to the security catalogue.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
// Helpers outside #[test] fns panic on setup failure by design, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod basics;
mod flood;
mod helper;
mod lifecycle;
mod namespaces;
mod pty;
mod sandbox;
mod spill;
mod stdin;
mod support;
