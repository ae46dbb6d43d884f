//! Finding every descendant of a process through `/proc`.
//!
//! The fast path reads `/proc/<pid>/task/<tid>/children` (one small file per thread, so the
//! common case of a finished command with no leftovers costs a directory listing and one
//! read). Kernels built without `CONFIG_PROC_CHILDREN` lack that file; then the parent
//! links of every process are read from `/proc/<pid>/stat`.

use std::collections::HashMap;
use std::fs;

/// Every live (or not yet reaped) descendant of `root`, parents before their children.
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    match children_via_tasks(root) {
        Some(first) => walk(first, |pid| children_via_tasks(pid).unwrap_or_default()),
        None => {
            let map = children_map_from_stat();
            let first = map.get(&root).cloned().unwrap_or_default();
            walk(first, |pid| map.get(&pid).cloned().unwrap_or_default())
        }
    }
}

fn walk(first: Vec<u32>, mut children: impl FnMut(u32) -> Vec<u32>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut queue = first;
    queue.reverse();
    while let Some(pid) = queue.pop() {
        if out.contains(&pid) {
            continue;
        }
        out.push(pid);
        let mut kids = children(pid);
        kids.reverse();
        queue.extend(kids);
    }
    out
}

/// The children of every thread of `pid`, or `None` when the `children` files do not exist
/// on this kernel (or `pid` is gone, which a caller treats as "no children").
#[expect(clippy::disallowed_methods, reason = "reads /proc")]
fn children_via_tasks(pid: u32) -> Option<Vec<u32>> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut out = Vec::new();
    let mut any_file = false;
    for task in tasks.flatten() {
        let Ok(text) = fs::read_to_string(task.path().join("children")) else { continue };
        any_file = true;
        out.extend(text.split_ascii_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    any_file.then_some(out)
}

/// `ppid -> children` for every process, from `/proc/<pid>/stat`.
#[expect(clippy::disallowed_methods, reason = "reads /proc")]
fn children_map_from_stat() -> HashMap<u32, Vec<u32>> {
    let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
    let Ok(dir) = fs::read_dir("/proc") else { return map };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else { continue };
        if let Some(ppid) = parse_ppid(&stat) {
            map.entry(ppid).or_default().push(pid);
        }
    }
    map
}

/// The parent pid from a `/proc/<pid>/stat` line. The command name is in parentheses and
/// may itself contain spaces and parentheses, so parsing starts after the last `)`.
fn parse_ppid(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_ascii_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
}

#[cfg(test)]
mod tests;
