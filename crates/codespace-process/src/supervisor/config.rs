//! The supervisor's settings: [`SupervisorConfig`], its defaults and the injectable [`Clock`].

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The hidden argument that selects the reaper role of the `codespace` binary.
pub const REAPER_ARG: &str = "__codespace-reaper";
/// Default live-process limit (`CODESPACE_MAX_PROCESSES`).
pub const DEFAULT_MAX_LIVE: usize = 8;
/// Default output ring size per process.
pub const DEFAULT_RING_BYTES: usize = 256 * 1024;
/// Default output kept per process in all (the ring's newest bytes in memory, the rest in a
/// spill file), when the supervisor has a spill directory.
pub const DEFAULT_SPILL_BYTES: u64 = 64 * 1024 * 1024;
/// Default retention of a completed handle.
pub const DEFAULT_COMPLETED_TTL: Duration = Duration::from_secs(15 * 60);
/// Default number of completed handles kept.
pub const DEFAULT_MAX_COMPLETED: usize = 64;
/// Initial terminal size of a PTY process.
pub const TTY_ROWS: u16 = 24;
/// Initial terminal size of a PTY process.
pub const TTY_COLS: u16 = 80;

/// The time source of handle retention. Injectable so eviction by age is testable.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Instant + Send + Sync>);

impl Clock {
    /// `Instant::now`.
    pub fn system() -> Self {
        Self(Arc::new(Instant::now))
    }

    /// Any monotonic time source, e.g. `Instant::now` plus an offset a test advances.
    pub fn from_fn(now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    pub(super) fn now(&self) -> Instant {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Clock")
    }
}

/// Supervisor settings. [`SupervisorConfig::new`] fills in the defaults.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    /// The binary that runs [`crate::reaper_main`] when given `reaper_arg` (the server's
    /// own executable).
    pub reaper_exe: PathBuf,
    /// The role argument, [`REAPER_ARG`].
    pub reaper_arg: OsString,
    /// Live plus reserved processes at most.
    pub max_live: usize,
    /// Output ring size per process (the newest bytes, in memory).
    pub ring_bytes: usize,
    /// Where output beyond the ring spills to: a private directory (0700) the commands
    /// never see (the server's state directory). At start, what dead supervisors left
    /// there is removed. `None` keeps only the ring.
    pub spill_dir: Option<PathBuf>,
    /// Output kept per process in all, with a spill directory (the newest bytes; older
    /// ones are dropped, `output_lost`). Not above `ring_bytes` means no spilling.
    pub spill_bytes: u64,
    /// Completed handles are evicted this long after they exited.
    pub completed_ttl: Duration,
    /// Completed handles kept at most (oldest evicted first).
    pub max_completed: usize,
    /// Time source of retention.
    pub clock: Clock,
    /// Start shims through the pre-started spawn helper (forked, not exec'd: one exec per
    /// command). Off, or when the helper cannot be used, each shim is exec'd directly.
    pub spawn_helper: bool,
}

impl SupervisorConfig {
    /// The defaults, with `reaper_exe` as the shim binary.
    pub fn new(reaper_exe: impl Into<PathBuf>) -> Self {
        Self {
            reaper_exe: reaper_exe.into(),
            reaper_arg: REAPER_ARG.into(),
            max_live: DEFAULT_MAX_LIVE,
            ring_bytes: DEFAULT_RING_BYTES,
            spill_dir: None,
            spill_bytes: DEFAULT_SPILL_BYTES,
            completed_ttl: DEFAULT_COMPLETED_TTL,
            max_completed: DEFAULT_MAX_COMPLETED,
            clock: Clock::system(),
            spawn_helper: true,
        }
    }
}

impl SupervisorConfig {
    /// Output kept per process in all: the spill cap when output spills, else the ring.
    pub fn retained_bytes(&self) -> u64 {
        match &self.spill_dir {
            Some(_) => self.spill_bytes.max(self.ring_bytes as u64),
            None => self.ring_bytes as u64,
        }
    }
}
