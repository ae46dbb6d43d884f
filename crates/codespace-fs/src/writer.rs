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
/// that start time exists and is not a zombie (one that has exited writes nothing more,
/// even before its parent reaps it); an older name (`<prefix><pid>.<n>.<nanos>`) is alive
/// while its pid is a live process. Where `/proc` cannot tell, signal 0 finding the pid
/// (even one this process may not signal) counts as alive. A name without a pid is nobody's.
pub(crate) fn writer_alive(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(TEMP_PREFIX.as_bytes()) else { return false };
    let parts: Vec<&[u8]> = rest.split(|b| *b == b'.').collect();
    let number = |p: &[u8]| std::str::from_utf8(p).ok().and_then(|d| d.parse::<u64>().ok());
    let Some(pid) = parts.first().and_then(|p| number(p)) else { return false };
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    let recorded = if parts.len() == 4 { parts.get(1).and_then(|p| number(p)) } else { None };
    match process(pid.as_raw_nonzero().get()) {
        Ok(found) => !found.exited && recorded.is_none_or(|r| r == 0 || r == found.start),
        Err(Unknown::Gone) => false,
        Err(Unknown::Unreadable) => {
            !matches!(rustix::process::test_kill_process(pid), Err(Errno::SRCH))
        }
    }
}

/// A process as `/proc/<pid>/stat` shows it.
struct Found {
    /// Started at this many clock ticks after boot.
    start: u64,
    /// A zombie (or dead) process: it has exited.
    exited: bool,
}

/// Why `/proc` could not say.
enum Unknown {
    /// No such process.
    Gone,
    /// `/proc` is not mounted, hidden, or its line could not be parsed.
    Unreadable,
}

fn start_time(pid: i32) -> Option<u64> {
    process(pid).ok().map(|found| found.start)
}

/// Fields 3 (state) and 22 (start time) of `/proc/<pid>/stat`, read past the command
/// name's closing parenthesis, since the name itself may hold spaces and `)`.
#[expect(
    clippy::disallowed_methods,
    reason = "/proc/<pid>/stat is the kernel's process table, not a workspace file"
)]
fn process(pid: i32) -> Result<Found, Unknown> {
    let stat = match std::fs::read(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unknown::Gone),
        Err(_) => return Err(Unknown::Unreadable),
    };
    let close = stat.iter().rposition(|b| *b == b')').ok_or(Unknown::Unreadable)?;
    let after = std::str::from_utf8(&stat[close + 1..]).map_err(|_| Unknown::Unreadable)?;
    let fields: Vec<&str> = after.split_ascii_whitespace().collect();
    // After ")" comes field 3 (state), so field 22 is the 20th.
    let state = fields.first().ok_or(Unknown::Unreadable)?;
    let start = fields.get(19).and_then(|f| f.parse().ok()).ok_or(Unknown::Unreadable)?;
    Ok(Found { start, exited: matches!(*state, "Z" | "X" | "x") })
}

#[cfg(test)]
mod tests;
