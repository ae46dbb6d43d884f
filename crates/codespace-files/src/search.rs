//! `grep`: line-oriented regex (or literal) search over the bounded walk, ignored paths left
//! out unless asked for, built on grep-searcher.
//! Binary files (a NUL byte) and files with a line longer than the line cap are skipped
//! whole and counted; the compiled pattern is size-capped; the search stops at the page end,
//! at a file cap, at a deadline or when the caller cancels, and says so.
//!
//! Time bound: the deadline and the cancel flag are polled before every file, before every
//! read of the searcher's buffer (64 KiB, or one line when a line is longer), at every
//! match, and inside the matcher while it searches one buffer (`matcher`), so a pattern
//! built to defeat the regex engine stops on time too.

use std::borrow::Borrow;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use codespace_fs::{FsError, Root, Walk, WalkLimits, WorkspacePath};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};

use crate::{FilesError, PathGlob};
use matcher::{LineMatcher, Stop};

mod matcher;

/// One search request, already validated by the caller.
#[derive(Debug, Clone)]
pub struct GrepRequest<'a> {
    pub pattern: &'a str,
    /// `pattern` is literal text, not a regular expression.
    pub fixed_strings: bool,
    pub case_insensitive: bool,
    /// Search ignored files too (`.gitignore`, `.ignore`, `.git/info/exclude`, `.git/`).
    pub include_ignored: bool,
    pub glob: Option<&'a PathGlob>,
    /// Matches to skip (the page start).
    pub offset: u64,
    /// Matches to return (the page size).
    pub limit: usize,
    /// Longest line text returned, in bytes.
    pub max_line_bytes: usize,
    /// Most files searched in one call.
    pub max_files: usize,
    /// Longest line the searcher buffers, in bytes: its memory and the regex work per
    /// buffer are bounded by it. A file with a longer line is skipped and counted.
    pub max_search_line_bytes: usize,
    /// Largest compiled pattern accepted, in bytes; a larger one is `RegexTooLarge`.
    pub max_regex_bytes: usize,
    /// The walk's caps; its `cancel` flag also stops the search, and its `progress`
    /// counts the files searched too.
    pub walk: WalkLimits,
    /// Past this instant the search stops and reports `incomplete`.
    pub deadline: Instant,
}

impl GrepRequest<'_> {
    /// The deadline passed or the caller cancelled: no more work should start.
    fn stopped(&self) -> bool {
        self.walk.cancel.is_cancelled() || Instant::now() >= self.deadline
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineMatch {
    pub path: String,
    /// 1-based.
    pub line: u64,
    pub text: String,
    pub text_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GrepOutcome {
    pub matches: Vec<LineMatch>,
    /// Matches exist after this page.
    pub has_more: bool,
    pub files_searched: u64,
    pub binary_files_skipped: u64,
    /// Files skipped because a line is longer than `max_search_line_bytes`.
    pub long_line_files_skipped: u64,
    /// A walk cap, the file cap, the deadline or a cancel cut the search short.
    pub incomplete: bool,
}

/// Files searched ahead of the in-order consumer, at most: bounds wasted work past the page
/// end and the matches held in memory.
const RUN_AHEAD: usize = 64;

pub fn grep(root: &Root, req: &GrepRequest<'_>) -> Result<GrepOutcome, FilesError> {
    grep_in(root, req, || crate::ignores::walk(root, &req.walk, req.include_ignored))
}

/// [`grep`] over the files of a walk the caller supplies (a cached one, say), taken only
/// once the pattern compiled. The walk must be of `root`, with `req.include_ignored`.
pub fn grep_in<W: Borrow<Walk>>(
    root: &Root,
    req: &GrepRequest<'_>,
    walk: impl FnOnce() -> Result<W, FilesError>,
) -> Result<GrepOutcome, FilesError> {
    // A literal search is the escaped pattern: the matcher below never sees the flag.
    let escaped;
    let literal;
    let req = if req.fixed_strings {
        escaped = regex_syntax::escape(req.pattern);
        literal = GrepRequest { pattern: &escaped, fixed_strings: false, ..req.clone() };
        &literal
    } else {
        req
    };
    let matcher = build_matcher(req)?;
    let walk = walk()?;
    let walk: &Walk = walk.borrow();
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
        long_line_files_skipped: 0,
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
            held_back: 0,
        }),
        ready: Condvar::new(),
        room: Condvar::new(),
    };
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let failure = std::thread::scope(|scope| {
        for _ in 0..workers {
            let (shared, files, matcher) = (&shared, &files, matcher.clone());
            scope.spawn(move || worker(root, req, files, &matcher, shared, wanted));
        }
        let failure = consume(&shared, files.len(), req, wanted, &mut out);
        shared.lock().stop = true;
        shared.room.notify_all();
        failure
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn build_matcher(req: &GrepRequest<'_>) -> Result<LineMatcher, FilesError> {
    let stop = Stop { deadline: req.deadline, cancel: req.walk.cancel.clone() };
    LineMatcher::new(req.pattern, req.case_insensitive, req.max_regex_bytes, stop)
}

enum FileResult {
    /// Not a searchable regular file any more (removed, replaced by a link or a FIFO).
    Skipped,
    Binary,
    /// A line is longer than the searcher's line cap.
    LongLine,
    /// The file cap, the deadline or a cancel was reached before this file.
    OverBudget,
    Failed(FilesError),
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
    /// Workers waiting for room ahead of the consumer: only then does a take wake anyone.
    held_back: usize,
}

/// The consumer waits on `ready` for exactly the next result; workers wait on `room`. A
/// wake-up goes only to a thread that is waiting for what just happened, instead of one
/// broadcast per file.
struct Shared {
    next: AtomicUsize,
    state: Mutex<State>,
    ready: Condvar,
    room: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for file `i`'s result and marks it consumed, which lets workers held back by
    /// `RUN_AHEAD` go on.
    fn take(&self, i: usize) -> FileResult {
        let (result, wake) = {
            let mut st = self.lock();
            loop {
                if let Some(r) = st.results[i].take() {
                    st.consumed = i + 1;
                    break (r, st.held_back > 0);
                }
                st = self.ready.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        if wake {
            self.room.notify_all();
        }
        result
    }

    /// Stores file `i`'s result, waking the consumer only when it waits for this one.
    fn put(&self, i: usize, result: FileResult) {
        let wake = {
            let mut st = self.lock();
            st.results[i] = Some(result);
            st.consumed == i
        };
        if wake {
            self.ready.notify_one();
        }
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
) -> Option<FilesError> {
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
            FileResult::LongLine => {
                out.files_searched += 1;
                out.long_line_files_skipped += 1;
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
    matcher: &LineMatcher,
    shared: &Shared,
    wanted: u64,
) {
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .heap_limit(Some(req.max_search_line_bytes))
        .build();
    loop {
        let i = shared.next.fetch_add(1, Ordering::Relaxed);
        if i >= files.len() {
            return;
        }
        {
            let mut st = shared.lock();
            while !st.stop && i >= st.consumed + RUN_AHEAD {
                st.held_back += 1;
                st = shared.room.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
                st.held_back -= 1;
            }
            if st.stop {
                return;
            }
        }
        let result = if req.stopped() || i >= req.max_files {
            FileResult::OverBudget
        } else {
            let result = search_one(root, req, files[i], matcher, &mut searcher, wanted);
            req.walk.progress.file_searched();
            result
        };
        shared.put(i, result);
    }
}

fn search_one(
    root: &Root,
    req: &GrepRequest<'_>,
    path: &str,
    matcher: &LineMatcher,
    searcher: &mut Searcher,
    wanted: u64,
) -> FileResult {
    let Ok(wp) = WorkspacePath::parse(path) else { return FileResult::Skipped };
    // The walk listed it as a regular file: one open, not a probe and an open.
    let file = match root.open_listed_file(&wp) {
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
    let mut sink =
        FileSink { req, path, cap: wanted + 1, found: Vec::new(), binary: false, stopped: false };
    let reader = StopReader { inner: file, req };
    let mut timed_out = match searcher.search_reader(matcher, reader, &mut sink) {
        Ok(()) => false,
        Err(e) if e.kind() == io::ErrorKind::TimedOut => true,
        Err(e) if is_line_cap(&e, req.max_search_line_bytes) => return FileResult::LongLine,
        // The matcher stopped mid-buffer (its error reaches us retyped as `Other`).
        Err(_) if req.stopped() => true,
        // A read error on one file (truncated under us, a failing disk) ends that file's
        // search only; the matches found before it stay valid.
        Err(_) => false,
    };
    timed_out |= sink.stopped;
    if sink.binary {
        return FileResult::Binary;
    }
    let count = sink.found.len() as u64;
    FileResult::Searched { matches: sink.found, count, timed_out }
}

/// grep-searcher's error for a line that does not fit its heap limit (an `Other` error
/// with exactly this text; pinned by a test).
fn is_line_cap(e: &io::Error, limit: usize) -> bool {
    e.kind() == io::ErrorKind::Other
        && e.to_string() == format!("configured allocation limit ({limit}) exceeded")
}

struct FileSink<'a> {
    req: &'a GrepRequest<'a>,
    path: &'a str,
    /// `offset + limit + 1`: no file needs to report more (one more proves another page).
    cap: u64,
    found: Vec<LineMatch>,
    binary: bool,
    /// The deadline or a cancel ended this file's search.
    stopped: bool,
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let (text, text_truncated) = line_text(mat.bytes(), self.req.max_line_bytes);
        self.found.push(LineMatch {
            path: self.path.to_owned(),
            line: mat.line_number().unwrap_or(0),
            text,
            text_truncated,
        });
        if self.req.stopped() {
            self.stopped = true;
            return Ok(false);
        }
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

/// Fails reads past the deadline or after a cancel, so one huge file cannot hold a search
/// beyond its budget. `TimedOut`, never `Interrupted`, which readers retry.
struct StopReader<'a, R> {
    inner: R,
    req: &'a GrepRequest<'a>,
}

impl<R: Read> Read for StopReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.req.stopped() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "search stopped"));
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
mod tests;
