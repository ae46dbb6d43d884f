//! The search's paging, caps and stop conditions over real temporary trees.

use std::time::Duration;

use codespace_fs::Cancel;

use super::*;

fn request<'a>(pattern: &'a str, offset: u64, limit: usize) -> GrepRequest<'a> {
    GrepRequest {
        pattern,
        fixed_strings: false,
        case_insensitive: false,
        include_ignored: true,
        glob: None,
        offset,
        limit,
        max_line_bytes: 512,
        max_files: 50_000,
        max_search_line_bytes: 1 << 20,
        max_regex_bytes: 1 << 20,
        walk: WalkLimits::default(),
        deadline: Instant::now() + std::time::Duration::from_secs(60),
    }
}

#[test]
fn parallel_pages_are_ordered_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..20 {
        std::fs::create_dir(dir.path().join(format!("d{d:02}"))).unwrap();
        for f in 0..25 {
            let body =
                if (d + f) % 3 == 0 { "hit one\nmiss\nhit two\nhit three\n" } else { "miss\n" };
            std::fs::write(dir.path().join(format!("d{d:02}/f{f:02}.txt")), body).unwrap();
        }
    }
    std::fs::write(dir.path().join("d05/bin.dat"), b"hit\0binary").unwrap();
    let root = Root::open(dir.path()).unwrap();
    let all = grep(&root, &request("hit", 0, 2000)).unwrap();
    assert!(!all.has_more);
    assert_eq!(all.binary_files_skipped, 1);
    let expected_files = (0..20)
        .flat_map(|d| (0..25).map(move |f| (d, f)))
        .filter(|(d, f)| (d + f) % 3 == 0)
        .count();
    assert_eq!(all.matches.len(), expected_files * 3);
    let mut sorted = all.matches.clone();
    sorted.sort_by(|a, b| (a.path.as_bytes(), a.line).cmp(&(b.path.as_bytes(), b.line)));
    assert_eq!(sorted, all.matches, "walk order, then line order");
    for limit in [7usize, 64, 500] {
        let mut paged = Vec::new();
        let mut offset = 0u64;
        loop {
            let page = grep(&root, &request("hit", offset, limit)).unwrap();
            assert!(page.matches.len() <= limit);
            offset += page.matches.len() as u64;
            paged.extend(page.matches);
            if !page.has_more {
                break;
            }
        }
        assert_eq!(paged, all.matches, "limit {limit}");
    }
    let past = grep(&root, &request("hit", 10_000, 10)).unwrap();
    assert!(past.matches.is_empty() && !past.has_more);
}

#[test]
fn line_text_cuts_on_char_boundary() {
    assert_eq!(line_text(b"abc\r\n", 10), ("abc".to_owned(), false));
    assert_eq!(line_text("aé".as_bytes(), 2), ("a".to_owned(), true));
    assert_eq!(line_text(b"abcdef\n", 3), ("abc".to_owned(), true));
}

/// A tree of `files` files, each `lines` short lines that all match "hit".
fn many_lines(files: usize, lines: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let body = "hit and some text to make the line longer\n".repeat(lines);
    for f in 0..files {
        std::fs::write(dir.path().join(format!("f{f:02}.txt")), &body).unwrap();
    }
    dir
}

#[test]
fn a_raised_cancel_flag_stops_the_search_before_any_file() {
    let dir = many_lines(4, 10);
    let root = Root::open(dir.path()).unwrap();
    let cancel = Cancel::new();
    let mut req = request("hit", 0, 2000);
    req.walk.cancel = cancel.clone();
    assert_eq!(grep(&root, &req).unwrap().matches.len(), 40, "not raised: every match");
    cancel.cancel();
    let out = grep(&root, &req).unwrap();
    assert!(out.incomplete);
    assert!(out.matches.is_empty());
    assert_eq!(out.files_searched, 0);
}

#[test]
fn a_cancel_mid_file_stops_the_search_of_that_file() {
    // ~100 MiB in one file: searching all of it takes far longer than the cancel delay.
    let dir = many_lines(1, 2_500_000);
    let root = Root::open(dir.path()).unwrap();
    let cancel = Cancel::new();
    let mut req = request("no such text", 0, 10);
    req.walk.cancel = cancel.clone();
    let raise = cancel.clone();
    let started = Instant::now();
    let out = std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            raise.cancel();
        });
        grep(&root, &req).unwrap()
    });
    assert!(out.incomplete, "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[test]
fn a_file_with_a_line_over_the_cap_is_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("hit{}\nhit\n", "a".repeat(200 << 10));
    std::fs::write(dir.path().join("a-long.txt"), long).unwrap();
    let fits = format!("hit{}\nhit\n", "a".repeat(100 << 10));
    std::fs::write(dir.path().join("b-fits.txt"), fits).unwrap();
    let root = Root::open(dir.path()).unwrap();
    let mut req = request("hit", 0, 100);
    req.max_search_line_bytes = 128 << 10;
    let out = grep(&root, &req).unwrap();
    assert_eq!(out.long_line_files_skipped, 1);
    assert_eq!(out.files_searched, 2);
    let paths: Vec<_> = out.matches.iter().map(|m| (m.path.as_str(), m.line)).collect();
    assert_eq!(paths, [("b-fits.txt", 1), ("b-fits.txt", 2)]);
    assert!(!out.incomplete);
}

#[test]
fn an_oversized_pattern_is_too_large_and_a_bad_one_invalid() {
    let dir = many_lines(1, 1);
    let root = Root::open(dir.path()).unwrap();
    for pattern in [r"(a{1000}){1000}", r"[\s\S]{65535}"] {
        let e = grep(&root, &request(pattern, 0, 10)).unwrap_err();
        assert!(matches!(e, FilesError::RegexTooLarge { limit } if limit == 1 << 20), "{e:?}");
        assert!(e.to_string().contains("too large"), "{e}");
    }
    // A syntax error whose own text names the size limit is still a syntax error.
    let e = grep(&root, &request("compiled regex exceeds size limit of 1048576(", 0, 10));
    assert!(matches!(e, Err(FilesError::InvalidRegex { .. })), "{e:?}");
    // Ordinary patterns are far below the cap.
    for pattern in [r"(?i)\bfn\s+\w+\(", r"\w{10}", r"[a-z_][a-z0-9_]*\s*=", r".{200}x"] {
        grep(&root, &request(pattern, 0, 10)).unwrap();
    }
}

#[test]
fn a_cancel_stops_a_pattern_that_defeats_the_lazy_dfa_mid_line() {
    // One 1 MiB line of an `a`/`b` mix: every byte is a new DFA state for this pattern,
    // and the line takes the regex engine over a minute in one call.
    let dir = tempfile::tempdir().unwrap();
    let mut x: u32 = 0x9e37_79b9;
    let line: Vec<u8> = (0..(1usize << 20) - 1)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if x & 1 == 0 { b'a' } else { b'b' }
        })
        .collect();
    std::fs::write(dir.path().join("ab.txt"), line).unwrap();
    let root = Root::open(dir.path()).unwrap();
    let cancel = Cancel::new();
    // No `c`: no match, so every byte of the line must be walked.
    let mut req = request("(?:a|b)*a(?:a|b){14558}c", 0, 10);
    req.walk.cancel = cancel.clone();
    let raise = cancel.clone();
    let started = Instant::now();
    let out = std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            raise.cancel();
        });
        grep(&root, &req).unwrap()
    });
    assert!(out.incomplete, "{out:?}");
    assert!(started.elapsed() < Duration::from_millis(1300), "{:?}", started.elapsed());
}
