//! Integration tests for `codespace-store`: real ledger files in temp dirs, several
//! handles and threads on one file, and a child process killed with SIGKILL. Case ids
//! (C1..C5, D1..D6) refer to the security catalogue.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside #[test] fns panic on setup failure by design, like the tests themselves"
)]

mod approvals;
mod contention;
mod crash;
mod drafts;
mod hygiene;
mod ledger;
mod owners;
mod reopen;
mod revert;
mod support;
mod timing;
