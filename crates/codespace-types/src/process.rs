//! The words of a command's life, as the supervisor reports it and `process_status` shows
//! it: [`ProcessState`], [`Termination`] and [`SignalInfo`].

use serde::Serialize;
use serde::ser::SerializeStruct as _;

words! {
    /// Whether a process (or anything of its tree) is still alive.
    pub enum ProcessState {
        Running = "running",
        /// The command and its whole tree are gone.
        Exited = "exited",
    }
}

words! {
    /// How an exited process ended.
    // A kill the server requested wins over the wait status it caused; a status that
    // arrived first is reported as it is.
    pub enum Termination {
        /// It exited on its own; see `exit_code`.
        Exited = "exited",
        /// A signal it did not get from the server killed it; see `signal`.
        Signaled = "signaled",
        /// Ended by the server at the time limit (SIGTERM, then SIGKILL after the grace);
        /// `signal` or `exit_code` says how it ended.
        Timeout = "timeout",
        /// Ended by the server on request (`terminate_process`, shutdown), as at the time
        /// limit.
        Terminated = "terminated",
        // The reaper shim vanished without reporting the command's status.
        /// Its status was lost.
        Unknown = "unknown",
    }
}

/// A signal that ended a process.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
pub struct SignalInfo {
    /// The signal number, e.g. 9.
    pub number: i32,
    /// The signal's name, e.g. `SIGKILL`, when it is a standard one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// JSON omits an absent `name`; a compact encoding that is not self-describing (the runner
/// worker's socket) cannot skip a field, so there it is always written.
impl Serialize for SignalInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let omit_name = self.name.is_none() && s.is_human_readable();
        let mut state = s.serialize_struct("SignalInfo", if omit_name { 1 } else { 2 })?;
        state.serialize_field("number", &self.number)?;
        if omit_name {
            state.skip_field("name")?;
        } else {
            state.serialize_field("name", &self.name)?;
        }
        state.end()
    }
}
