//! grep's line matcher: the pattern compiled once per request to a lazy DFA (with a literal
//! prefilter), searched in a way that stops when the request's deadline passes or it is
//! cancelled, whatever the pattern.
//!
//! Three engines share one NFA. `fast` is the lazy DFA's own search loop, configured to
//! give up once its cache has been cleared a few times instead of falling back to an engine
//! that cannot be interrupted (as grep-regex's meta regex does); its work per call is
//! therefore bounded by a few cache fills. When it gives up, `walk` (the same DFA, never
//! giving up) continues byte by byte and polls the stop condition. Only a Unicode word
//! boundary beside a non-ASCII byte defeats the DFA; then the PikeVM searches line by line,
//! and a line is only started when its worst-case cost (line length × NFA states) ends
//! before the deadline (plus a grace); otherwise the search stops there as if the deadline
//! had come. A cancel is seen between such lines.

mod hir;
mod walk;

use std::cell::RefCell;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use codespace_fs::Cancel;
use grep_matcher::{LineTerminator, Match, Matcher, NoCaptures};
use regex_automata::hybrid::dfa::{self, Cache, DFA};
use regex_automata::nfa::thompson::pikevm::{self, PikeVM};
use regex_automata::nfa::thompson::{self, NFA, WhichCaptures};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Anchored, Input, MatchErrorKind, MatchKind};

use crate::FilesError;
use walk::{Dir, Halt};

/// Lazy-DFA cache per engine and searching thread, in bytes (the regex crate's default;
/// grep's is 1 GiB). Raised to the pattern's minimum when that is larger: the minimum grows
/// with the NFA, which the compiled-pattern cap bounds.
const DFA_CACHE_BYTES: usize = 2 * 1024 * 1024;

/// Cache clears after which `fast` gives up and the interruptible walk takes over.
const FAST_CACHE_CLEARS: usize = 3;

/// Worst PikeVM time per NFA state and haystack byte, in ns, with margin (about 4 ns
/// measured for a pattern whose every state is active at every byte).
const PIKE_NS_PER_STEP: u64 = 10;

/// How far past the deadline a PikeVM call, which cannot be interrupted, may be allowed
/// to end by its worst-case estimate.
const PIKE_GRACE: Duration = Duration::from_millis(500);

/// The text of the error for a search stopped by the deadline or a cancel.
const STOPPED: &str = "search stopped";

/// When the search must stop: the request's deadline and cancel flag.
#[derive(Debug, Clone)]
pub(super) struct Stop {
    pub(super) deadline: Instant,
    pub(super) cancel: Cancel,
}

impl Stop {
    fn is_stopped(&self) -> bool {
        self.cancel.is_cancelled() || Instant::now() >= self.deadline
    }
}

/// The compiled pattern, shared by every searching thread.
#[derive(Debug)]
struct Engines {
    fast: DFA,
    walk: DFA,
    /// Anchored, all matches, backwards: finds a match's start from its end.
    reverse: DFA,
    pike: PikeVM,
    nfa_states: usize,
    line_terminator: Option<LineTerminator>,
}

/// Each thread's mutable search state; `walk`, `reverse` and `pike` are made on first use.
#[derive(Debug)]
struct Caches {
    fast: Cache,
    walk: Option<Cache>,
    reverse: Option<Cache>,
    pike: Option<pikevm::Cache>,
}

/// A `grep_matcher::Matcher` whose every search ends by the request's stop condition.
/// Cloned per searching thread (a clone has its own caches).
#[derive(Debug)]
pub(super) struct LineMatcher {
    engines: Arc<Engines>,
    caches: RefCell<Caches>,
    stop: Stop,
}

impl Clone for LineMatcher {
    fn clone(&self) -> Self {
        Self::with_caches(Arc::clone(&self.engines), self.stop.clone())
    }
}

impl LineMatcher {
    pub(super) fn new(
        pattern: &str,
        case_insensitive: bool,
        max_regex_bytes: usize,
        stop: Stop,
    ) -> Result<Self, FilesError> {
        let hir = hir::parse(pattern, case_insensitive)
            .map_err(|reason| FilesError::InvalidRegex { pattern: pattern.to_owned(), reason })?;
        let nfa = compile(pattern, &hir, false, max_regex_bytes)?;
        let reverse_nfa = compile(pattern, &hir, true, max_regex_bytes)?;
        // Only literal prefixes the DFA can jump to quickly, as the meta regex does.
        let pre =
            Prefilter::from_hir_prefix(MatchKind::LeftmostFirst, &hir).filter(Prefilter::is_fast);
        let build = |config: dfa::Config, nfa: NFA| {
            let config = config
                .cache_capacity(DFA_CACHE_BYTES)
                .skip_cache_capacity_check(true)
                .unicode_word_boundary(true);
            DFA::builder().configure(config).build_from_nfa(nfa).map_err(|e| {
                FilesError::InvalidRegex { pattern: pattern.to_owned(), reason: e.to_string() }
            })
        };
        let fast = build(
            DFA::config()
                .prefilter(pre)
                .minimum_cache_clear_count(Some(FAST_CACHE_CLEARS))
                .minimum_bytes_per_state(None),
            nfa.clone(),
        )?;
        let walk = build(DFA::config(), nfa.clone())?;
        let reverse = build(DFA::config().match_kind(MatchKind::All), reverse_nfa)?;
        let pike = PikeVM::new_from_nfa(nfa.clone()).map_err(|e| FilesError::InvalidRegex {
            pattern: pattern.to_owned(),
            reason: e.to_string(),
        })?;
        // `^`/`$` mean the haystack's ends: then the searcher must hand over one line at a
        // time, which it does when the matcher names no line terminator (as grep-regex).
        let line_terminator = (!hir.properties().look_set().contains_anchor_haystack())
            .then(|| LineTerminator::byte(b'\n'));
        let engines =
            Engines { fast, walk, reverse, pike, nfa_states: nfa.states().len(), line_terminator };
        Ok(Self::with_caches(Arc::new(engines), stop))
    }

    fn with_caches(engines: Arc<Engines>, stop: Stop) -> Self {
        let caches =
            Caches { fast: engines.fast.create_cache(), walk: None, reverse: None, pike: None };
        Self { engines, caches: RefCell::new(caches), stop }
    }

    /// The end of the first match in `input` (earliest or leftmost-first, as it says).
    fn end(&self, input: &Input<'_>) -> Result<Option<usize>, Halt> {
        let e = &self.engines;
        let caches = &mut *self.caches.borrow_mut();
        match e.fast.try_search_fwd(&mut caches.fast, input) {
            Ok(half) => return Ok(half.map(|h| h.offset())),
            Err(err) if matches!(err.kind(), MatchErrorKind::GaveUp { .. }) => {
                // The clear count lives in the cache: start afresh for the next call.
                e.fast.reset_cache(&mut caches.fast);
            }
            Err(_) => return Err(Halt::Quit),
        }
        let cache = caches.walk.get_or_insert_with(|| e.walk.create_cache());
        walk::walk(&e.walk, cache, input, Dir::Forward, &self.stop)
    }

    /// The start of the leftmost-first match that ends at `end`.
    fn start(&self, hay: &[u8], at: usize, end: usize) -> Result<Option<usize>, Halt> {
        let e = &self.engines;
        let caches = &mut *self.caches.borrow_mut();
        let cache = caches.reverse.get_or_insert_with(|| e.reverse.create_cache());
        let input = Input::new(hay).span(at..end).anchored(Anchored::Yes);
        walk::walk(&e.reverse, cache, &input, Dir::Reverse, &self.stop)
    }

    /// The first match from `at` by the PikeVM, one line at a time, polling the stop
    /// condition between lines. A match never spans lines, so the first line with a match
    /// holds the leftmost-first one.
    fn pike(&self, hay: &[u8], at: usize, earliest: bool) -> io::Result<Option<Match>> {
        let e = &self.engines;
        let caches = &mut *self.caches.borrow_mut();
        let cache = caches.pike.get_or_insert_with(|| e.pike.create_cache());
        let mut start = at;
        loop {
            if self.stop.is_stopped() {
                return Err(stopped());
            }
            let end =
                hay[start..].iter().position(|&b| b == b'\n').map_or(hay.len(), |i| start + i);
            if !self.pike_fits(end - start) {
                return Err(stopped());
            }
            let input = Input::new(hay).span(start..end).earliest(earliest);
            if let Some(m) = e.pike.find(cache, input) {
                return Ok(Some(Match::new(m.start(), m.end())));
            }
            if end == hay.len() {
                return Ok(None);
            }
            start = end + 1;
        }
    }

    /// Whether the PikeVM over `len` bytes surely ends before the deadline and its grace.
    fn pike_fits(&self, len: usize) -> bool {
        let steps = (len as u64).saturating_mul(self.engines.nfa_states as u64);
        let worst = Duration::from_nanos(steps.saturating_mul(PIKE_NS_PER_STEP));
        let limit = self.stop.deadline.checked_add(PIKE_GRACE).unwrap_or(self.stop.deadline);
        Instant::now().checked_add(worst).is_some_and(|end| end <= limit)
    }
}

/// The NFA of `hir`, forward (with the implicit group the PikeVM reports spans with) or
/// reverse; over `limit` bytes it is `RegexTooLarge`.
fn compile(
    pattern: &str,
    hir: &regex_syntax::hir::Hir,
    reverse: bool,
    limit: usize,
) -> Result<NFA, FilesError> {
    let captures = if reverse { WhichCaptures::None } else { WhichCaptures::Implicit };
    thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .utf8(false)
                .reverse(reverse)
                .which_captures(captures)
                .nfa_size_limit(Some(limit)),
        )
        .build_from_hir(hir)
        .map_err(|e| match e.size_limit() {
            Some(limit) => FilesError::RegexTooLarge { limit },
            None => FilesError::InvalidRegex { pattern: pattern.to_owned(), reason: e.to_string() },
        })
}

fn stopped() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, STOPPED)
}

impl Matcher for LineMatcher {
    type Captures = NoCaptures;
    type Error = io::Error;

    fn find_at(&self, haystack: &[u8], at: usize) -> io::Result<Option<Match>> {
        let input = Input::new(haystack).span(at..haystack.len());
        let found = match self.end(&input) {
            Ok(Some(end)) => self.start(haystack, at, end).map(|s| s.map(|s| Match::new(s, end))),
            Ok(None) => Ok(None),
            Err(halt) => Err(halt),
        };
        match found {
            Ok(m) => Ok(m),
            Err(Halt::Stopped) => Err(stopped()),
            Err(Halt::Quit) => self.pike(haystack, at, false),
        }
    }

    fn new_captures(&self) -> io::Result<NoCaptures> {
        Ok(NoCaptures::new())
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> io::Result<Option<usize>> {
        let input = Input::new(haystack).span(at..haystack.len()).earliest(true);
        match self.end(&input) {
            Ok(end) => Ok(end),
            Err(Halt::Stopped) => Err(stopped()),
            Err(Halt::Quit) => Ok(self.pike(haystack, at, true)?.map(|m| m.end())),
        }
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        self.engines.line_terminator
    }
}

#[cfg(test)]
mod tests;
