//! The gateway's error enum and its mapping to wire codes: the one place where an internal
//! failure becomes an `ErrorCode`.

use codespace_policy::Denial;
use codespace_protocol::{ErrorBody, ErrorCode};
use codespace_runner::{FsError, RunnerError};

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("workspace {id:?} is not registered")]
    WorkspaceNotFound { id: String },
    #[error("{0}")]
    Denied(Denial),
    #[error(transparent)]
    Runner(#[from] RunnerError),
    #[error("{what} must be between 1 and {max}, got {value}")]
    OutputLimit { what: &'static str, value: u64, max: u64 },
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<FsError> for GatewayError {
    fn from(e: FsError) -> Self {
        GatewayError::Runner(RunnerError::Fs(e))
    }
}

impl GatewayError {
    /// The wire form of this error. Exhaustive by design: a new variant must choose its code.
    pub fn to_body(&self) -> ErrorBody {
        let message = self.to_string();
        match self {
            GatewayError::WorkspaceNotFound { .. } => {
                ErrorBody::new(ErrorCode::WorkspaceNotFound, message)
            }
            GatewayError::Denied(_) => ErrorBody::new(ErrorCode::Unauthorized, message),
            GatewayError::OutputLimit { .. } => ErrorBody::new(ErrorCode::OutputLimit, message),
            GatewayError::Internal(_) => ErrorBody::new(ErrorCode::Internal, message),
            GatewayError::Runner(
                RunnerError::InvalidGlob { .. } | RunnerError::InvalidRegex { .. },
            ) => ErrorBody::new(ErrorCode::InvalidPattern, message),
            GatewayError::Runner(RunnerError::Fs(fs)) => fs_body(fs),
        }
    }
}

/// Maps a filesystem refusal to its code, carrying the workspace-relative path.
pub(crate) fn fs_body(e: &FsError) -> ErrorBody {
    let code = match e {
        FsError::PathEscape { .. } => ErrorCode::PathEscape,
        FsError::SymlinkRejected { .. } => ErrorCode::SymlinkRejected,
        // A directory is not a regular file: the same refusal as a FIFO or a device.
        FsError::SpecialFileRejected { .. } | FsError::IsDirectory { .. } => {
            ErrorCode::SpecialFileRejected
        }
        FsError::NotFound { .. } => ErrorCode::FileNotFound,
        FsError::NotDirectory { .. } => ErrorCode::PathNotDirectory,
        FsError::RootUnavailable { .. } | FsError::Io { .. } => ErrorCode::FileOperationFailed,
    };
    let body = ErrorBody::new(code, e.to_string());
    match e.path() {
        Some(p) if !p.is_empty() => body.with_path(p),
        _ => body,
    }
}
