//! Who wrote a temp file: the writer's pid and its start time are in the name, so a pid
//! the kernel reused (or a thread id of another process) is never taken for a live writer.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::io::Errno;

use crate::write::TEMP_PREFIX;

/// Counter that keeps temp names of one process apart.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A hidden name unlikely to collide: pid, the process's start time (clock ticks since
/// boot, 0 when `/proc` cannot tell), a per-process counter and the clock. Fixed length
/// (well under 255 bytes) whatever the target name is.
pub(crate) fn temp_name() -> String {
    static OWN_START: OnceLock<u64> = OnceLock::new();
    let pid = rustix::process::getpid();
    let start = *OWN_START.get_or_init(|| start_time(pid.as_raw_nonzero().get()).unwrap_or(0));
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{TEMP_PREFIX}{}.{start}.{n}.{nanos:08x}", pid.as_raw_nonzero())
}

/// Whether the process that named temp file `name` is alive. A name carrying a start time
/// (`<prefix><pid>.<start>.<n>.<nanos>`) is alive only while a process with that pid and
/// that start time exists; an older name (`<prefix><pid>.<n>.<nanos>`), or a start time
/// `/proc` cannot check, falls back to signal 0 finding the pid (even one this process may
/// not signal). A name without a pid is nobody's.
pub(crate) fn writer_alive(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(TEMP_PREFIX.as_bytes()) else { return false };
    let parts: Vec<&[u8]> = rest.split(|b| *b == b'.').collect();
    let number = |p: &[u8]| std::str::from_utf8(p).ok().and_then(|d| d.parse::<u64>().ok());
    let Some(pid) = parts.first().and_then(|p| number(p)) else { return false };
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    let recorded = if parts.len() == 4 { parts.get(1).and_then(|p| number(p)) } else { None };
    if let Some(recorded) = recorded.filter(|start| *start != 0) {
        match start_time_of(pid.as_raw_nonzero().get()) {
            Ok(start) => return start == recorded,
            Err(StartUnknown::Gone) => return false,
            Err(StartUnknown::Unreadable) => {}
        }
    }
    !matches!(rustix::process::test_kill_process(pid), Err(Errno::SRCH))
}

/// Why a start time is not known.
enum StartUnknown {
    /// No such process.
    Gone,
    /// `/proc` is not mounted, hidden, or its line could not be parsed.
    Unreadable,
}

fn start_time(pid: i32) -> Option<u64> {
    start_time_of(pid).ok()
}

/// Field 22 of `/proc/<pid>/stat` (the start time in clock ticks since boot), read past the
/// command name's closing parenthesis, since the name itself may hold spaces and `)`.
#[expect(
    clippy::disallowed_methods,
    reason = "/proc/<pid>/stat is the kernel's process table, not a workspace file"
)]
fn start_time_of(pid: i32) -> Result<u64, StartUnknown> {
    let stat = match std::fs::read(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(StartUnknown::Gone),
        Err(_) => return Err(StartUnknown::Unreadable),
    };
    let close = stat.iter().rposition(|b| *b == b')').ok_or(StartUnknown::Unreadable)?;
    let after = std::str::from_utf8(&stat[close + 1..]).map_err(|_| StartUnknown::Unreadable)?;
    // After ")" come field 3 (state) onwards, so field 22 is the 20th.
    after
        .split_ascii_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok())
        .ok_or(StartUnknown::Unreadable)
}

#[cfg(test)]
mod tests;
