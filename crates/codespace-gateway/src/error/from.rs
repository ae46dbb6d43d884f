//! How the errors of the crates beneath become a [`GatewayError`]: a ledger failure, a
//! runner's (a supervisor refusal keeps its own variant) and a filesystem's.

use codespace_runner::{FsError, RunnerError};
use codespace_store::StoreError;

use super::GatewayError;

impl From<StoreError> for GatewayError {
    fn from(e: StoreError) -> Self {
        GatewayError::Ledger(Box::new(e))
    }
}

/// A supervisor refusal keeps its own variant, wherever it came from.
impl From<RunnerError> for GatewayError {
    fn from(e: RunnerError) -> Self {
        match e {
            RunnerError::Process(p) => GatewayError::Process(p),
            other @ (RunnerError::Fs(_)
            | RunnerError::Files(_)
            | RunnerError::NoWorkspace { .. }
            | RunnerError::RootReplaced { .. }
            | RunnerError::Task { .. }
            | RunnerError::Transport(_)) => GatewayError::Runner(other),
        }
    }
}

impl From<FsError> for GatewayError {
    fn from(e: FsError) -> Self {
        GatewayError::Runner(RunnerError::Fs(e))
    }
}
