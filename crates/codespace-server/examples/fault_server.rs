//! The server with test faults armed from `CODESPACE_TEST_WORKER_*` variables: a test-only
//! target (`cargo test` builds it into `target/<profile>/examples/`), started by the
//! end-to-end tests that inject faults. Nothing else reads these variables: the `codespace`
//! binary never obeys them, however it was built. The faults act where the runner was built
//! with its `test-hooks` feature, as the tests' build is.

use std::path::PathBuf;
use std::process::ExitCode;

use codespace_runner::WorkerFaults;
use codespace_server::Faults;

/// The fault variables, passed on to a worker this server starts.
const VARS: [&str; 3] = [
    "CODESPACE_TEST_WORKER_STALL_AT",
    "CODESPACE_TEST_WORKER_MARKER",
    "CODESPACE_TEST_WORKER_HANG_UP",
];

#[expect(
    clippy::disallowed_methods,
    reason = "a test's fault variables, read in a test-only binary"
)]
fn main() -> ExitCode {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let worker = WorkerFaults {
        stall_at: var(VARS[0]).and_then(|v| v.parse().ok()),
        marker: var(VARS[1]).map(PathBuf::from),
        hang_up_after: var(VARS[2]),
    };
    let worker_env =
        VARS.iter().filter_map(|k| std::env::var_os(k).map(|v| ((*k).to_owned(), v))).collect();
    codespace_server::main_with(Faults { worker, worker_env })
}
