//! Unit tests of `cache`.

use super::*;

fn identity(ino: u64) -> Identity {
    Identity { dev: 1, ino, size: 3, mtime: SystemTime::UNIX_EPOCH, ctime: SystemTime::UNIX_EPOCH }
}

#[test]
fn forgetting_a_directory_forgets_what_is_beneath_it_only() {
    let mut c = Caches::default();
    for p in ["d", "d/a", "d/b/c", "d0", "d.x", "e"] {
        c.keep_version(p, 1, identity(1), Version::Absent);
    }
    c.forget("d");
    let left: Vec<&String> = c.versions.keys().collect();
    assert_eq!(left, ["d.x", "d0", "e"]);
}

#[test]
fn an_entry_answers_only_in_its_epoch() {
    let mut c = Caches::default();
    c.keep_version("a", 1, identity(5), Version::Absent);
    assert!(c.version("a", 1).is_some());
    assert!(c.version("a", 2).is_none());
}

#[test]
fn the_cache_is_bounded() {
    let mut c = Caches::default();
    for i in 0..MAX_VERSION_ENTRIES + 10 {
        c.keep_version(&format!("f{i:06}"), 1, identity(i as u64), Version::Absent);
    }
    assert_eq!(c.versions.len(), MAX_VERSION_ENTRIES);
}

#[test]
fn a_walk_is_not_kept_across_an_event_or_right_after_a_new_directory() {
    let mut c = Caches::default();
    let walk = Arc::new(Walk::default());
    let started = Instant::now();
    let generation = c.listing_generation();
    c.invalidate_listings();
    assert!(!c.keep_listing(false, generation, started, walk.clone()));
    c.directory_appeared(started);
    assert!(!c.keep_listing(false, c.listing_generation(), started, walk.clone()));
    let later = started + SETTLE + Duration::from_millis(1);
    assert!(c.keep_listing(true, c.listing_generation(), later, walk.clone()));
    assert!(c.listing(true).is_some() && c.listing(false).is_none());
    // A derived value lives as long as its listing.
    let kept = c.listing(true).unwrap();
    c.keep_derived(&kept, "k", Arc::new(7u8));
    c.keep_derived(&walk, "k", Arc::new(8u8));
    assert!(c.derived(&kept, "k").is_some());
    c.invalidate_listings();
    assert!(c.derived(&kept, "k").is_none());
    let incomplete = Arc::new(Walk { incomplete: true, ..Walk::default() });
    assert!(!c.keep_listing(false, c.listing_generation(), later, incomplete));
}

#[test]
fn only_old_regular_files_are_cacheable() {
    let now = SystemTime::now();
    let mut id = identity(1);
    id.ctime = now - Duration::from_secs(10);
    id.mtime = id.ctime;
    assert!(id.settled_before(now));
    id.ctime = now - Duration::from_millis(500);
    assert!(!id.settled_before(now));
}
