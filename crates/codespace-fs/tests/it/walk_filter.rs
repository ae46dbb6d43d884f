//! `Root::walk_filtered`: the filter hook sees every directory once, a skipped directory is
//! never opened, and `DirFiles` reads rule files without following links or opening FIFOs.

use std::collections::BTreeMap;

use codespace_fs::{DirFiles, SmallFile, WalkFilter, WalkLimits};
use rustix::fs::{CWD, Mode};

use crate::support::Fx;

/// Records what it was shown and skips the names listed in each directory's `skip` file.
#[derive(Default)]
struct Recorder {
    /// Directory path -> (parent's path, its `skip` file).
    entered: BTreeMap<String, (Option<String>, Option<SmallFile>)>,
}

impl WalkFilter for Recorder {
    /// This directory's path and the names its `skip` file lists.
    type Dir = (String, Vec<String>);

    fn enter(&mut self, parent: Option<&Self::Dir>, path: &str, files: &DirFiles<'_>) -> Self::Dir {
        let rules = files.read("skip", 64);
        let names = rules
            .as_ref()
            .map(|f| String::from_utf8_lossy(&f.bytes).lines().map(str::to_owned).collect())
            .unwrap_or_default();
        self.entered.insert(path.to_owned(), (parent.map(|p| p.0.clone()), rules));
        (path.to_owned(), names)
    }

    fn skip(&self, dir: &Self::Dir, path: &str, _is_dir: bool) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        dir.1.iter().any(|n| n == name)
    }
}

#[test]
fn skipped_entries_are_absent_and_skipped_directories_are_never_opened() {
    let fx = Fx::new();
    fx.file("skip", b"junk\nsecret.txt\n");
    fx.file("keep.txt", b"");
    fx.file("secret.txt", b"");
    fx.file("src/skip", b"local.txt");
    fx.file("src/local.txt", b"");
    fx.file("src/secret.txt", b"");
    // Deeper than the depth cap: opening it would mark the walk incomplete.
    let mut deep = String::from("junk");
    for i in 0..70 {
        deep.push_str(&format!("/d{i}"));
    }
    fx.file(&format!("{deep}/x.txt"), b"");
    let mut filter = Recorder::default();
    let walk = fx.root.walk_filtered(&WalkLimits::default(), &mut filter).unwrap();
    assert_eq!(walk.files, ["keep.txt", "skip", "src/secret.txt", "src/skip"]);
    assert!(!walk.incomplete, "the skipped deep tree was never opened");
    let entered: Vec<(&str, Option<&str>)> =
        filter.entered.iter().map(|(k, v)| (k.as_str(), v.0.as_deref())).collect();
    assert_eq!(entered, [("", None), ("src", Some(""))]);
    // The plain walk is unchanged.
    assert!(fx.root.walk(&WalkLimits::default()).unwrap().incomplete);
}

#[test]
fn dir_files_read_only_regular_files_and_cap_them() {
    let fx = Fx::new();
    fx.file("a/skip", &[b'x'; 100]);
    fx.file("b/.git/info/exclude", b"rules\n");
    fx.symlink("../a/skip", "c/skip");
    fx.dir("d");
    rustix::fs::mknodat(
        CWD,
        fx.ws.join("d/skip"),
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o666),
        0,
    )
    .unwrap();
    fx.dir("e/skip");
    fx.symlink(&fx.outside, "f/.git");
    let mut filter = Recorder::default();
    fx.root.walk_filtered(&WalkLimits::default(), &mut filter).unwrap();
    let capped = filter.entered["a"].1.as_ref().unwrap();
    assert_eq!((capped.bytes.len(), capped.truncated), (64, true));
    for dir in ["c", "d", "e"] {
        assert_eq!(filter.entered[dir].1, None, "{dir}: links, FIFOs and directories are not read");
    }

    // Multi-component paths go through no symlink either; `..` never leaves.
    struct Probe(Vec<(String, Option<Vec<u8>>)>);
    impl WalkFilter for Probe {
        type Dir = ();
        fn enter(&mut self, _: Option<&()>, path: &str, files: &DirFiles<'_>) {
            for rel in [".git/info/exclude", "../b/.git/info/exclude", "./skip", ""] {
                let got = files.read(rel, 1024).map(|f| f.bytes);
                self.0.push((format!("{path}:{rel}"), got));
            }
        }
        fn skip(&self, (): &(), _: &str, _: bool) -> bool {
            false
        }
    }
    let mut probe = Probe(Vec::new());
    fx.root.walk_filtered(&WalkLimits::default(), &mut probe).unwrap();
    let found: Vec<&str> =
        probe.0.iter().filter(|(_, got)| got.is_some()).map(|(k, _)| k.as_str()).collect();
    assert_eq!(found, ["b:.git/info/exclude"]);
    let (_, bytes) = probe.0.iter().find(|(k, _)| k == "b:.git/info/exclude").unwrap();
    assert_eq!(bytes.as_deref(), Some(&b"rules\n"[..]));
}
