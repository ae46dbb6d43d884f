//! `grep`: line-oriented regex search over the bounded walk, built on grep-searcher.
//! Binary files (a NUL byte) are skipped whole; the search stops at the page end, at a file
//! cap or at a deadline, and says so.

use std::io::{self, Read};
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

pub fn grep(root: &Root, req: &GrepRequest<'_>) -> Result<GrepOutcome, RunnerError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(req.case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(req.pattern)
        .map_err(|e| RunnerError::InvalidRegex { reason: e.to_string() })?;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build();

    let walk = root.walk(&req.walk)?;
    let mut out = GrepOutcome {
        matches: Vec::new(),
        has_more: false,
        files_searched: 0,
        binary_files_skipped: 0,
        incomplete: walk.incomplete,
    };
    // Matches seen so far, across files, including the skipped ones before `offset`.
    let mut seen: u64 = 0;
    let wanted = req.offset.saturating_add(req.limit as u64);

    for path in walk.files.iter().filter(|p| req.glob.is_none_or(|g| g.is_match(p))) {
        if Instant::now() >= req.deadline || out.files_searched as usize >= req.max_files {
            out.incomplete = true;
            break;
        }
        let Ok(wp) = WorkspacePath::parse(path) else { continue };
        let file = match root.open_file(&wp) {
            Ok(f) => f,
            // The tree changed under the walk (removed, replaced by a link or a FIFO): the
            // file is no longer a searchable regular file, so it has no matches.
            Err(
                FsError::NotFound { .. }
                | FsError::SymlinkRejected { .. }
                | FsError::SpecialFileRejected { .. }
                | FsError::IsDirectory { .. }
                | FsError::NotDirectory { .. },
            ) => continue,
            Err(e) => return Err(e.into()),
        };
        out.files_searched += 1;
        let mut sink = FileSink {
            path,
            req,
            seen_before: seen,
            wanted,
            found: Vec::new(),
            count: 0,
            binary: false,
            full: false,
        };
        let reader = DeadlineReader { inner: file, deadline: req.deadline };
        match searcher.search_reader(&matcher, reader, &mut sink) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::TimedOut => out.incomplete = true,
            // A read error on one file (it was truncated, the disk failed) ends that file's
            // search only; the matches found before it stay valid.
            Err(_) => {}
        }
        if sink.binary {
            out.binary_files_skipped += 1;
            continue;
        }
        seen += sink.count;
        let full = sink.full;
        out.matches.append(&mut sink.found);
        if full {
            out.has_more = true;
            break;
        }
        if out.incomplete {
            break;
        }
    }
    Ok(out)
}

struct FileSink<'a> {
    path: &'a str,
    req: &'a GrepRequest<'a>,
    seen_before: u64,
    /// `offset + limit`: one more match than this means another page exists.
    wanted: u64,
    found: Vec<LineMatch>,
    count: u64,
    binary: bool,
    full: bool,
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let index = self.seen_before + self.count;
        if index >= self.wanted {
            self.full = true;
            return Ok(false);
        }
        self.count += 1;
        if index >= self.req.offset {
            let (text, text_truncated) = line_text(mat.bytes(), self.req.max_line_bytes);
            self.found.push(LineMatch {
                path: self.path.to_owned(),
                line: mat.line_number().unwrap_or(0),
                text,
                text_truncated,
            });
        }
        Ok(true)
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
mod tests {
    use super::*;

    #[test]
    fn line_text_cuts_on_char_boundary() {
        assert_eq!(line_text(b"abc\r\n", 10), ("abc".to_owned(), false));
        assert_eq!(line_text("aé".as_bytes(), 2), ("a".to_owned(), true));
        assert_eq!(line_text(b"abcdef\n", 3), ("abc".to_owned(), true));
    }
}
