//! The line matcher against grep-regex (same matching lines) and its stop on cancel.

use std::time::Duration;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};

use super::*;

fn stop_never() -> Stop {
    Stop { deadline: Instant::now() + Duration::from_secs(3600), cancel: Cancel::new() }
}

/// The 1-based numbers of the lines `matcher` matches in `hay`, as our search runs it.
fn lines<M: Matcher>(matcher: M, hay: &[u8]) -> Vec<u64>
where
    M::Error: std::fmt::Display,
{
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build();
    let mut found = Vec::new();
    searcher
        .search_slice(
            matcher,
            hay,
            Lossy(|n, _| {
                found.push(n);
                Ok(true)
            }),
        )
        .unwrap();
    found
}

const PATTERNS: &[&str] = &[
    "hit",
    "fn",
    "",
    "x*",
    "^",
    "$",
    "^$",
    "^fn",
    "value;$",
    "(?m)^ *let",
    "(?m)\\)$",
    "[a-z_][a-z0-9_]*\\s*=",
    "\\bfn\\s+\\w+\\(",
    "\\bé\\w*\\b",
    "\\w{3}é",
    "\\p{Greek}+",
    "[[:upper:]]{2,}",
    "foo|bar|baz",
    "(?i)ÉTÉ",
    "(?i)hello WORLD",
    "a.c",
    "[\\s\\S]b",
    "\\s+$",
    "\\d+\\.\\d+",
    "(?-u:\\xff)",
    "\\B",
    "\\bend\\b",
    "(foo)?bar",
    "(?:a|b)*a(?:a|b){3}",
];

const HAYSTACKS: &[&str] = &[
    "",
    "\n",
    "\n\n\n",
    "hit\nmiss\n",
    "fn main() {\n    let value = 1;\n}\n",
    "no newline at end fn",
    "été\nÉTÉ\nhello world\nHELLO WORLD\n",
    "αβγ δ\nfoo bar baz\nabc a-c a\tc\n",
    "1.5 and 2\n   \ntrailing space   \n",
    "ab aab ba bbba abab\nbbbb\naaaa\n",
    "word\u{e9}word ééé café\nend. end\n",
    "CAPS lower MiXeD\nfoobar bar\n",
];

#[test]
fn matches_the_same_lines_as_grep_regex() {
    let mut bytes: Vec<Vec<u8>> = HAYSTACKS.iter().map(|h| h.as_bytes().to_vec()).collect();
    bytes.push(b"latin1 \xff here\nplain\n".to_vec());
    bytes.push(HAYSTACKS.concat().repeat(3000).into_bytes());
    for &pattern in PATTERNS {
        for case_insensitive in [false, true] {
            let reference = RegexMatcherBuilder::new()
                .case_insensitive(case_insensitive)
                .line_terminator(Some(b'\n'))
                .build(pattern)
                .unwrap();
            let ours = LineMatcher::new(pattern, case_insensitive, 1 << 20, stop_never()).unwrap();
            assert_eq!(ours.line_terminator(), reference.line_terminator(), "{pattern:?}");
            for hay in &bytes {
                let want = lines(&reference, hay);
                let got = lines(&ours, hay);
                assert_eq!(got, want, "{pattern:?} (i: {case_insensitive}) on {:?}", hay.len());
            }
        }
    }
}

#[test]
fn find_at_reports_the_leftmost_first_match() {
    let reference = RegexMatcherBuilder::new().line_terminator(Some(b'\n')).build("a+b|c").unwrap();
    let ours = LineMatcher::new("a+b|c", false, 1 << 20, stop_never()).unwrap();
    let hay = b"xx aab c\nab";
    for at in 0..hay.len() {
        assert_eq!(ours.find_at(hay, at).unwrap(), reference.find_at(hay, at).unwrap(), "{at}");
    }
    // A Unicode word boundary next to non-ASCII text takes the PikeVM path.
    let ours = LineMatcher::new(r"\bé+\b", false, 1 << 20, stop_never()).unwrap();
    assert_eq!(ours.find_at("a éé b".as_bytes(), 0).unwrap(), Some(Match::new(2, 6)));
}

#[test]
fn refusals_read_as_grep_regex_words_them() {
    for pattern in ["a\nb", "(", "[z-a]"] {
        let want = RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(pattern)
            .unwrap_err()
            .to_string();
        match LineMatcher::new(pattern, false, 1 << 20, stop_never()) {
            Err(FilesError::InvalidRegex { pattern: sent, reason }) => {
                assert_eq!(reason, want);
                assert_eq!(sent, pattern);
            }
            other => panic!("{pattern:?}: {other:?}"),
        }
    }
    let e = LineMatcher::new(r"(a{1000}){1000}", false, 1 << 20, stop_never()).unwrap_err();
    assert!(matches!(e, FilesError::RegexTooLarge { limit } if limit == 1 << 20), "{e:?}");
}

/// A pattern whose lazy DFA thrashes its cache on `a`/`b` text and never matches it (no
/// `c`): grep-regex's engine then falls back to the PikeVM and spends over a minute on one
/// 1 MiB line.
const THRASH: &str = "(?:a|b)*a(?:a|b){14558}c";

fn ab_line(len: usize) -> Vec<u8> {
    // A pseudo-random mix: every window of the line is a new DFA state.
    let mut x: u32 = 0x9e37_79b9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if x & 1 == 0 { b'a' } else { b'b' }
        })
        .collect()
}

#[test]
fn a_raised_cancel_flag_stops_a_thrashing_search_mid_line() {
    let cancel = Cancel::new();
    let stop =
        Stop { deadline: Instant::now() + Duration::from_secs(3600), cancel: cancel.clone() };
    let matcher = LineMatcher::new(THRASH, false, 1 << 20, stop).unwrap();
    let hay = ab_line(1 << 20);
    let started = Instant::now();
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            cancel.cancel();
        });
        matcher.shortest_match(&hay)
    });
    let e = out.unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
    assert!(started.elapsed() < Duration::from_millis(1200), "{:?}", started.elapsed());
}

#[test]
fn a_past_deadline_stops_the_search() {
    let stop = Stop { deadline: Instant::now(), cancel: Cancel::new() };
    let matcher = LineMatcher::new(THRASH, false, 1 << 20, stop).unwrap();
    let e = matcher.shortest_match(&ab_line(1 << 20)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::TimedOut);
}

#[test]
fn the_pikevm_only_starts_a_line_it_can_finish_by_the_deadline() {
    // The deadline is far off, yet the PikeVM's estimated cost here exceeds it, so the
    // search refuses at once; a search that started would run until the deadline.
    let soon =
        || Stop { deadline: Instant::now() + Duration::from_secs(30), cancel: Cancel::new() };
    // A Unicode word boundary beside non-ASCII text needs the PikeVM: far too costly here.
    let matcher = LineMatcher::new(r"(?:a|b)*a(?:a|b){14000}c\b", false, 1 << 20, soon()).unwrap();
    let mut hay = "é".as_bytes().to_vec();
    hay.extend(ab_line(1 << 20));
    let started = Instant::now();
    let e = matcher.shortest_match(&hay).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    // An ordinary word-boundary pattern over a 1 MiB non-ASCII line is searched.
    let stop = Stop { deadline: Instant::now() + Duration::from_secs(10), cancel: Cancel::new() };
    let matcher = LineMatcher::new(r"\bzz\w+\b", false, 1 << 20, stop).unwrap();
    let mut hay = "é".repeat(1 << 19).into_bytes();
    hay.extend(" zzé".as_bytes());
    assert_eq!(matcher.shortest_match(&hay).unwrap(), Some(hay.len()));
}
