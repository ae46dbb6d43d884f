//! Integration tests of `codespace-sandbox`: real commands under the real launcher
//! (`examples/run_sandboxed.rs`, the reaper shim's part alone). Each case asserts a denial
//! that would fail if its rule were missing, and (where it is safe to do) the same action
//! succeeding without the sandbox or under the policy that allows it. Case ids refer to
//! `security-cases.md` (F: filesystem, N: network, R: runtime).
//!
//! These tests never skip: a host that cannot enforce the sandbox fails them, loudly
//! (`CODESPACE_REQUIRE_SANDBOX=1` in CI only makes the message say so).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside #[test] fns panic on setup failure by design, like the tests themselves"
)]

mod filesystem;
mod network;
mod runtime;
mod support;
