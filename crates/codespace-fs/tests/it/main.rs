//! Integration tests for `codespace-fs`: real files, symlinks, FIFOs, sockets and devices
//! under a temp dir. Case ids (P1..P9) refer to the security catalogue.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside #[test] fns panic on setup failure by design, like the tests themselves"
)]

mod paths;
mod race;
mod read;
mod root;
mod special;
mod support;
mod symlinks;
mod walk;
mod walk_filter;
mod write;
