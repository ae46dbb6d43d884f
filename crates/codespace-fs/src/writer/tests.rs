//! Temp-file writer identity: pid and start time.

use super::{temp_name, writer_alive};
use crate::write::TEMP_PREFIX;

#[test]
fn this_process_is_alive_under_its_own_name() {
    assert!(writer_alive(temp_name().as_bytes()));
}

#[test]
fn a_live_pid_with_another_start_time_is_not_the_writer() {
    let own = temp_name();
    let rest = own.strip_prefix(TEMP_PREFIX).unwrap();
    let mut parts: Vec<&str> = rest.split('.').collect();
    let start: u64 = parts[1].parse().unwrap();
    assert_ne!(start, 0, "this process's start time is readable from /proc");
    let other = (start + 1).to_string();
    parts[1] = &other;
    // The pid is ours and alive; only its start time differs, as for a reused pid.
    assert!(!writer_alive(format!("{TEMP_PREFIX}{}", parts.join(".")).as_bytes()));
}

#[test]
fn an_old_style_name_falls_back_to_the_pid() {
    let pid = std::process::id();
    assert!(writer_alive(format!("{TEMP_PREFIX}{pid}.3.0000abcd").as_bytes()));
    assert!(!writer_alive(format!("{TEMP_PREFIX}x.3.0000abcd").as_bytes()));
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test makes a zombie of its own and looks it up in the process table"
)]
fn a_zombie_writes_nothing_more() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    // Not waited for yet: once it has exited it stays a zombie until reaped.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let name = format!("{TEMP_PREFIX}{pid}.3.0000abcd");
    while writer_alive(name.as_bytes()) {
        assert!(std::time::Instant::now() < deadline, "a zombie counted as a live writer");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    assert!(stat.contains(") Z "), "the child is still there, as a zombie: {stat}");
    child.wait().unwrap();
}
