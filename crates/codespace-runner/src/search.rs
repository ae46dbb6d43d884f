//! `grep`: line-oriented regex search over the bounded walk, built on grep-searcher.
//! Binary files (a NUL byte) are skipped whole; the search stops at the page end, at a file
//! cap or at a deadline, and says so.

use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use codespace_fs::{FsError, Root, WalkLimits, WorkspacePath};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};

use crate::{PathGlob, RunnerError};

/// One search request, already validated by the caller.
#[derive(Debug, Clone)]
pub struct GrepRequest<'a> {
    pub pattern: &'a str,
    pub case_insensitive: bool,
    pub glob: Option<&'a PathGlob>,
    /// Matches to skip (the page start).
    pub offset: u64,
    /// Matches to return (the page size).
    pub limit: usize,
    /// Longest line text returned, in bytes.
    pub max_line_bytes: usize,
    /// Most files searched in one call.
    pub max_files: usize,
    pub walk: WalkLimits,
    /// Past this instant the search stops and reports `incomplete`.
    pub deadline: Instant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMatch {
    pub path: String,
    /// 1-based.
    pub line: u64,
    pub text: String,
    pub text_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepOutcome {
    pub matches: Vec<LineMatch>,
    /// Matches exist after this page.
    pub has_more: bool,
    pub files_searched: u64,
    pub binary_files_skipped: u64,
    /// A walk cap, the file cap or the deadline cut the search short.
    pub incomplete: bool,
}

/// Files searched ahead of the in-order consumer, at most: bounds wasted work past the page
/// end and the matches held in memory.
const RUN_AHEAD: usize = 64;

pub fn grep(root: &Root, req: &GrepRequest<'_>) -> Result<GrepOutcome, RunnerError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(req.case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(req.pattern)
        .map_err(|e| RunnerError::InvalidRegex { reason: e.to_string() })?;
    let walk = root.walk(&req.walk)?;
    let files: Vec<&str> = walk
        .files
        .iter()
        .map(String::as_str)
        .filter(|p| req.glob.is_none_or(|g| g.is_match(p)))
        .collect();
    let wanted = req.offset.saturating_add(req.limit as u64);
    let mut out = GrepOutcome {
        matches: Vec::new(),
        has_more: false,
        files_searched: 0,
        binary_files_skipped: 0,
        incomplete: walk.incomplete,
    };

    // Files are searched in parallel but consumed strictly in walk order, so pages are
    // deterministic; workers stay at most RUN_AHEAD files ahead of the consumer.
    let shared = Shared {
        next: AtomicUsize::new(0),
        state: Mutex::new(State {
            results: (0..files.len()).map(|_| None).collect(),
            consumed: 0,
            stop: false,
        }),
        changed: Condvar::new(),
    };
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let failure = std::thread::scope(|scope| {
        for _ in 0..workers {
            let (shared, files, matcher) = (&shared, &files, matcher.clone());
            scope.spawn(move || worker(root, req, files, &matcher, shared, wanted));
        }
        let failure = consume(&shared, files.len(), req, wanted, &mut out);
        shared.lock().stop = true;
        shared.changed.notify_all();
        failure
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

enum FileResult {
    /// Not a searchable regular file any more (removed, replaced by a link or a FIFO).
    Skipped,
    Binary,
    /// The file cap or the deadline was reached before this file.
    OverBudget,
    Failed(RunnerError),
    /// Up to `wanted + 1` matches of this file, and how many it had (capped the same way).
    Searched {
        matches: Vec<LineMatch>,
        count: u64,
        timed_out: bool,
    },
}

struct State {
    results: Vec<Option<FileResult>>,
    consumed: usize,
    stop: bool,
}

struct Shared {
    next: AtomicUsize,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for file `i`'s result and marks it consumed, which lets workers held back by
    /// `RUN_AHEAD` go on.
    fn take(&self, i: usize) -> FileResult {
        let result = {
            let mut st = self.lock();
            loop {
                if let Some(r) = st.results[i].take() {
                    st.consumed = i + 1;
                    break r;
                }
                st = self.changed.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        self.changed.notify_all();
        result
    }
}

/// Takes the files' results strictly in walk order into `out` until the page is full, a
/// budget ends the search, or a file fails (returned).
fn consume(
    shared: &Shared,
    files: usize,
    req: &GrepRequest<'_>,
    wanted: u64,
    out: &mut GrepOutcome,
) -> Option<RunnerError> {
    // Matches seen so far, across files, including the skipped ones before `offset`.
    let mut seen: u64 = 0;
    for i in 0..files {
        match shared.take(i) {
            FileResult::Skipped => {}
            FileResult::OverBudget => {
                out.incomplete = true;
                return None;
            }
            FileResult::Failed(e) => return Some(e),
            FileResult::Binary => {
                out.files_searched += 1;
                out.binary_files_skipped += 1;
            }
            FileResult::Searched { matches, count, timed_out } => {
                out.files_searched += 1;
                let skip = req.offset.saturating_sub(seen).min(count) as usize;
                let room = (wanted - seen.max(req.offset).min(wanted)) as usize;
                out.matches.extend(matches.into_iter().skip(skip).take(room));
                seen = seen.saturating_add(count);
                if seen > wanted {
                    out.has_more = true;
                    return None;
                }
                if timed_out {
                    out.incomplete = true;
                    return None;
                }
            }
        }
    }
    None
}

fn worker(
    root: &Root,
    req: &GrepRequest<'_>,
    files: &[&str],
    matcher: &grep_regex::RegexMatcher,
    shared: &Shared,
    wanted: u64,
) {
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build();
    loop {
        let i = shared.next.fetch_add(1, Ordering::Relaxed);
        if i >= files.len() {
            return;
        }
        {
            let mut st = shared.lock();
            while !st.stop && i >= st.consumed + RUN_AHEAD {
                st = shared.changed.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            if st.stop {
                return;
            }
        }
        let result = if Instant::now() >= req.deadline || i >= req.max_files {
            FileResult::OverBudget
        } else {
            search_one(root, req, files[i], matcher, &mut searcher, wanted)
        };
        shared.lock().results[i] = Some(result);
        shared.changed.notify_all();
    }
}

fn search_one(
    root: &Root,
    req: &GrepRequest<'_>,
    path: &str,
    matcher: &grep_regex::RegexMatcher,
    searcher: &mut Searcher,
    wanted: u64,
) -> FileResult {
    let Ok(wp) = WorkspacePath::parse(path) else { return FileResult::Skipped };
    let file = match root.open_file(&wp) {
        Ok(f) => f,
        // The tree changed under the walk: the file is no longer a searchable regular file.
        Err(
            FsError::NotFound { .. }
            | FsError::SymlinkRejected { .. }
            | FsError::SpecialFileRejected { .. }
            | FsError::IsDirectory { .. }
            | FsError::NotDirectory { .. },
        ) => return FileResult::Skipped,
        Err(e) => return FileResult::Failed(e.into()),
    };
    let mut sink = FileSink {
        path,
        max_line_bytes: req.max_line_bytes,
        cap: wanted + 1,
        found: Vec::new(),
        binary: false,
    };
    let reader = DeadlineReader { inner: file, deadline: req.deadline };
    let timed_out = match searcher.search_reader(matcher, reader, &mut sink) {
        Ok(()) => false,
        Err(e) if e.kind() == io::ErrorKind::TimedOut => true,
        // A read error on one file (truncated under us, a failing disk) ends that file's
        // search only; the matches found before it stay valid.
        Err(_) => false,
    };
    if sink.binary {
        return FileResult::Binary;
    }
    let count = sink.found.len() as u64;
    FileResult::Searched { matches: sink.found, count, timed_out }
}

struct FileSink<'a> {
    path: &'a str,
    max_line_bytes: usize,
    /// `offset + limit + 1`: no file needs to report more (one more proves another page).
    cap: u64,
    found: Vec<LineMatch>,
    binary: bool,
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let (text, text_truncated) = line_text(mat.bytes(), self.max_line_bytes);
        self.found.push(LineMatch {
            path: self.path.to_owned(),
            line: mat.line_number().unwrap_or(0),
            text,
            text_truncated,
        });
        Ok((self.found.len() as u64) < self.cap)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The line without its terminator, lossy UTF-8, cut on a character boundary.
fn line_text(bytes: &[u8], max: usize) -> (String, bool) {
    let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let cut = line.len() > max;
    let mut text = String::from_utf8_lossy(&line[..line.len().min(max)]).into_owned();
    if cut {
        // A multi-byte character split by the cut shows as U+FFFD at the end; drop it.
        while text.ends_with('\u{FFFD}') {
            text.pop();
        }
    }
    (text, cut)
}

/// Fails reads past the deadline so one huge file cannot hold a search beyond its budget.
struct DeadlineReader<R> {
    inner: R,
    deadline: Instant,
}

impl<R: Read> Read for DeadlineReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if Instant::now() >= self.deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "search deadline"));
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests {
    use super::*;

    fn request<'a>(pattern: &'a str, offset: u64, limit: usize) -> GrepRequest<'a> {
        GrepRequest {
            pattern,
            case_insensitive: false,
            glob: None,
            offset,
            limit,
            max_line_bytes: 512,
            max_files: 50_000,
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
}
