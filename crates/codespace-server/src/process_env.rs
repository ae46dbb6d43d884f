//! The process settings, read from the environment by clap: `CODESPACE_PROCESS_TIMEOUT_SECS`,
//! `CODESPACE_MAX_PROCESSES`, `CODESPACE_PROCESS_MAX_PIDS` and
//! `CODESPACE_PROCESS_SPILL_BYTES`. They have no flags, so the
//! parser sees an empty command line and every value comes from its variable.

use std::fmt::Display;
use std::str::FromStr;

use clap::Parser;
use clap::builder::{StringValueParser, TypedValueParser};
use clap::error::{ContextKind, ContextValue};

use crate::config::UsageError;

#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
pub(crate) struct ProcessEnv {
    /// Time limit of a command, in seconds.
    #[arg(
        env = "CODESPACE_PROCESS_TIMEOUT_SECS",
        value_name = "CODESPACE_PROCESS_TIMEOUT_SECS",
        default_value_t = 30,
        value_parser = positive::<u64>()
    )]
    pub(crate) timeout_secs: u64,
    /// How many commands may run at once.
    #[arg(
        env = "CODESPACE_MAX_PROCESSES",
        value_name = "CODESPACE_MAX_PROCESSES",
        default_value_t = 8,
        value_parser = positive::<u64>()
    )]
    pub(crate) max_processes: u64,
    /// The `pid_max` of a sandboxed command's PID namespace: room for a parallel build, far
    /// below the host's; the kernel refuses less than its floor.
    #[arg(
        env = "CODESPACE_PROCESS_MAX_PIDS",
        value_name = "CODESPACE_PROCESS_MAX_PIDS",
        default_value_t = 1024,
        value_parser = integer_in(codespace_sandbox::MIN_MAX_PIDS, codespace_sandbox::MAX_MAX_PIDS)
    )]
    pub(crate) max_pids: u32,
    /// Output kept per process (the newest bytes; beyond the in-memory ring they spill to a
    /// file in the state directory). At most the ring (or 0): no spilling.
    #[arg(
        env = "CODESPACE_PROCESS_SPILL_BYTES",
        value_name = "CODESPACE_PROCESS_SPILL_BYTES",
        default_value_t = codespace_process::DEFAULT_SPILL_BYTES,
        value_parser = integer_in(0u64, MAX_SPILL_BYTES)
    )]
    pub(crate) spill_bytes: u64,
}

/// The largest spill cap accepted: 1 TiB.
const MAX_SPILL_BYTES: u64 = 1 << 40;

impl ProcessEnv {
    /// Reads the variables; an unset one takes its default.
    pub(crate) fn from_env() -> Result<ProcessEnv, UsageError> {
        ProcessEnv::try_parse_from(std::iter::empty::<String>()).map_err(usage)
    }
}

/// A positive integer (surrounding whitespace ignored).
fn positive<T>() -> impl TypedValueParser<Value = T>
where
    T: FromStr + Default + PartialOrd + Clone + Send + Sync + 'static,
{
    StringValueParser::new().try_map(|v: String| {
        v.trim()
            .parse::<T>()
            .ok()
            .filter(|n| *n > T::default())
            .ok_or_else(|| "expected a positive integer".to_owned())
    })
}

/// An integer in `min..=max` (surrounding whitespace ignored).
fn integer_in<T>(min: T, max: T) -> impl TypedValueParser<Value = T>
where
    T: FromStr + PartialOrd + Display + Copy + Send + Sync + 'static,
{
    StringValueParser::new().try_map(move |v: String| {
        v.trim()
            .parse::<T>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| format!("expected an integer from {min} to {max}"))
    })
}

/// `NAME="value": reason`, as for every other configuration error; clap's own rendering
/// would speak of command-line arguments that do not exist.
fn usage(e: clap::Error) -> UsageError {
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let reason = std::error::Error::source(&e).map(ToString::to_string);
    match (context(ContextKind::InvalidArg), context(ContextKind::InvalidValue), reason) {
        (Some(arg), Some(value), Some(reason)) => {
            UsageError(format!("{}={value:?}: {reason}", arg.trim_matches(['<', '>', '[', ']'])))
        }
        _ => UsageError(e.to_string().trim_end().to_owned()),
    }
}
