//! P4: live TOCTOU races. A thread swaps a real directory (or file) with a symlink to the
//! outside, as fast as it can, while this thread reads and writes through the root.
//! Success is zero reads of the outside secret and zero writes outside.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use codespace_fs::{FsError, WalkLimits};
use rustix::fs::{CWD, RenameFlags};
use rustix::io::Errno;

use crate::support::{Fx, SECRET, p};

const INSIDE: &[u8] = b"inside\n";
const RACE_FOR: Duration = Duration::from_millis(1500);

/// Flips `a` and `b` until dropped: `RENAME_EXCHANGE` where the filesystem has it, else
/// a four-rename rotation (which leaves `a` briefly missing, and that is fine too).
struct Flipper {
    stop: Arc<AtomicBool>,
    flips: Arc<AtomicU64>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Flipper {
    fn start(a: PathBuf, b: PathBuf) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flips = Arc::new(AtomicU64::new(0));
        let exchange = rustix::fs::renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE);
        let exchange = match exchange {
            Ok(()) => true,
            Err(Errno::INVAL | Errno::NOSYS) => {
                eprintln!("RENAME_EXCHANGE unavailable; racing with plain renames");
                false
            }
            Err(errno) => panic!("renameat2: {errno}"),
        };
        let handle = {
            let (stop, flips) = (Arc::clone(&stop), Arc::clone(&flips));
            thread::spawn(move || {
                let park = a.with_extension("parked");
                while !stop.load(Ordering::Relaxed) {
                    if exchange {
                        rustix::fs::renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                    } else {
                        rotate(&a, &b, &park);
                    }
                    flips.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        Flipper { stop, flips, handle: Some(handle) }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            handle.join().unwrap();
        }
        self.flips.load(Ordering::Relaxed)
    }
}

fn rotate(a: &Path, b: &Path, park: &Path) {
    fs::rename(a, park).unwrap();
    fs::rename(b, a).unwrap();
    fs::rename(a, b).unwrap();
    fs::rename(park, a).unwrap();
}

#[derive(Default, Debug)]
struct Tally {
    inside: u64,
    escapes: u64,
    symlink_rejected: u64,
    not_found: u64,
    other_errors: u64,
}

impl Tally {
    fn content(&mut self, bytes: &[u8]) {
        if bytes == SECRET {
            self.escapes += 1;
        } else if bytes == INSIDE {
            self.inside += 1;
        } else {
            panic!("unexpected content {bytes:?}");
        }
    }

    fn error(&mut self, err: &FsError) {
        match err {
            FsError::SymlinkRejected { .. } => self.symlink_rejected += 1,
            FsError::NotFound { .. } => self.not_found += 1,
            _ => self.other_errors += 1,
        }
    }

    fn errors(&self) -> u64 {
        self.symlink_rejected + self.not_found + self.other_errors
    }
}

/// Reads `path` through every read entry point until `RACE_FOR` passes.
fn race_reads(fx: &Fx, path: &str) -> Tally {
    let path = p(path);
    let mut tally = Tally::default();
    let inside_version = codespace_fs::Version::of_bytes(INSIDE);
    let start = Instant::now();
    let mut i = 0u64;
    while start.elapsed() < RACE_FOR || i < 2000 {
        match i % 3 {
            0 => match fx.root.read_window(&path, 0, 1 << 16) {
                Ok(window) => tally.content(&window.data),
                Err(err) => tally.error(&err),
            },
            1 => match fx.root.open_file(&path) {
                Ok(file) => tally.content(&std::io::read_to_string(file).unwrap().into_bytes()),
                Err(err) => tally.error(&err),
            },
            _ => match fx.root.version(&path) {
                Ok(version) if version == inside_version => tally.inside += 1,
                Ok(codespace_fs::Version::Absent) => tally.not_found += 1,
                Ok(_) => tally.escapes += 1,
                Err(err) => tally.error(&err),
            },
        }
        i += 1;
    }
    tally
}

fn check(what: &str, tally: &Tally, flips: u64) {
    eprintln!("P4 {what}: flips={flips} {tally:?}");
    assert_eq!(tally.escapes, 0, "{what}: read the outside secret");
    assert!(flips > 100, "{what}: the flipper barely ran ({flips})");
    assert!(tally.inside > 0 && tally.errors() > 0, "{what}: the race was not live: {tally:?}");
}

#[test]
fn p4_ancestor_dir_swapped_with_symlink_never_reads_outside() {
    let fx = Fx::new();
    fx.file("race/secret.txt", INSIDE);
    fx.symlink(&fx.outside, "swap");
    let flipper = Flipper::start(fx.ws.join("race"), fx.ws.join("swap"));
    let tally = race_reads(&fx, "race/secret.txt");
    check("ancestor swap", &tally, flipper.finish());
}

#[test]
fn p4_leaf_file_swapped_with_symlink_never_reads_outside() {
    let fx = Fx::new();
    fx.file("secret.txt", INSIDE);
    fx.symlink(fx.outside.join("secret.txt"), "swap");
    let flipper = Flipper::start(fx.ws.join("secret.txt"), fx.ws.join("swap"));
    let tally = race_reads(&fx, "secret.txt");
    check("leaf swap", &tally, flipper.finish());
}

#[test]
fn p4_writes_and_walks_during_swaps_never_land_outside() {
    let fx = Fx::new();
    fx.file("race/secret.txt", INSIDE);
    fs::write(fx.outside.join("outside-only.txt"), SECRET).unwrap();
    fx.symlink(&fx.outside, "swap");
    let before = fx.outside_snapshot();
    let flipper = Flipper::start(fx.ws.join("race"), fx.ws.join("swap"));
    let (mut written, mut refused, mut walks) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    let mut i = 0u64;
    while start.elapsed() < RACE_FOR || i < 500 {
        let target = p(&format!("race/new-{}.txt", i % 8));
        match fx.root.write_atomic(&target, b"new", None) {
            Ok(()) => written += 1,
            Err(_) => refused += 1,
        }
        match fx.root.create_dirs(&p("race/made/deeper")) {
            Ok(()) => written += 1,
            Err(_) => refused += 1,
        }
        if i.is_multiple_of(16) {
            let walk = fx.root.walk(&WalkLimits::default()).unwrap();
            assert!(!walk.files.iter().any(|f| f.contains("outside-only")), "{:?}", walk.files);
            walks += 1;
        }
        i += 1;
    }
    let flips = flipper.finish();
    eprintln!("P4 writes: flips={flips} written={written} refused={refused} walks={walks}");
    assert_eq!(fx.outside_snapshot(), before, "something was written outside");
    assert!(written > 0 && refused > 0, "the race was not live");
}

#[test]
fn p4_replaced_root_path_does_not_move_the_pinned_root() {
    let fx = Fx::new();
    fx.file("secret.txt", INSIDE);
    let moved = fx.ws.with_file_name("ws-moved");
    fs::rename(&fx.ws, &moved).unwrap();
    std::os::unix::fs::symlink(&fx.outside, &fx.ws).unwrap();
    // The root is the descriptor taken at open, not the path string.
    assert_eq!(fx.root.read_window(&p("secret.txt"), 0, 100).unwrap().data, INSIDE);
    fx.root.write_atomic(&p("after.txt"), b"x", None).unwrap();
    assert!(moved.join("after.txt").exists());
    assert!(!fx.outside.join("after.txt").exists());
}
