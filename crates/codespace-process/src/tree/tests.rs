//! Unit tests of `tree`.

use super::*;

#[test]
fn parses_ppid_with_hostile_comm() {
    assert_eq!(parse_ppid("12 (a) b) c) S 34 12 12 0 -1"), Some(34));
    assert_eq!(parse_ppid("12 (sh) S 1 12 12"), Some(1));
    assert_eq!(parse_ppid("garbage"), None);
}

#[test]
#[expect(clippy::disallowed_methods, reason = "starts a child to find")]
fn finds_a_spawned_child_both_ways() {
    let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let me = std::process::id();
    let fast = descendants(me);
    let map = children_map_from_stat();
    let slow = walk(map.get(&me).cloned().unwrap_or_default(), |p| {
        map.get(&p).cloned().unwrap_or_default()
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(fast.contains(&child.id()), "{fast:?}");
    assert!(slow.contains(&child.id()), "{slow:?}");
}

#[test]
fn walk_orders_parents_first_and_ignores_cycles() {
    let tree: HashMap<u32, Vec<u32>> =
        [(1, vec![2, 3]), (2, vec![4]), (4, vec![2])].into_iter().collect();
    let got = walk(tree[&1].clone(), |p| tree.get(&p).cloned().unwrap_or_default());
    assert_eq!(got, vec![2, 4, 3]);
}
