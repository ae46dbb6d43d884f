//! The lazy DFA driven one byte at a time, polling the stop condition: the path a search
//! takes when the DFA's own loop gives up, so no pattern can hold a search past its stop.

use regex_automata::Input;
use regex_automata::hybrid::LazyStateID;
use regex_automata::hybrid::dfa::{Cache, DFA};

use super::Stop;

/// Bytes walked between two polls of the stop condition. A poll is a clock read (tens of
/// ns); a byte costs at most one new DFA state, bounded by the compiled-pattern cap, so a
/// stop is seen within milliseconds even when every byte builds a state.
const POLL_BYTES: usize = 64;

/// Why a walk ended without an answer.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Halt {
    /// The deadline passed or the caller cancelled.
    Stopped,
    /// The DFA cannot decide here (a Unicode word boundary next to a non-ASCII byte): the
    /// caller must ask the NFA.
    Quit,
}

/// Where a match seen after stepping over the byte at `at` is reported: matches are
/// delayed by one byte, so forward it ends at `at`, backward it starts at `at + 1`.
#[derive(Clone, Copy)]
pub(super) enum Dir {
    Forward,
    Reverse,
}

/// The end (forward) or start (reverse) of a match in `input`'s span: the first one seen
/// for an `earliest` input, else the last one before the DFA dies (leftmost-first forward,
/// leftmost start backward). `dfa` must not give up (no cache clear limit).
pub(super) fn walk(
    dfa: &DFA,
    cache: &mut Cache,
    input: &Input<'_>,
    dir: Dir,
    stop: &Stop,
) -> Result<Option<usize>, Halt> {
    let hay = input.haystack();
    let span = input.get_span();
    let start = match dir {
        Dir::Forward => dfa.start_state_forward(cache, input),
        Dir::Reverse => dfa.start_state_reverse(cache, input),
    };
    let mut sid = start.map_err(|_| Halt::Quit)?;
    let mut last = None;
    let positions: Box<dyn Iterator<Item = usize>> = match dir {
        Dir::Forward => Box::new(span.start..span.end),
        Dir::Reverse => Box::new((span.start..span.end).rev()),
    };
    for (walked, at) in positions.enumerate() {
        if walked % POLL_BYTES == 0 && stop.is_stopped() {
            return Err(Halt::Stopped);
        }
        sid = dfa.next_state(cache, sid, hay[at]).map_err(|_| Halt::Quit)?;
        if sid.is_tagged() {
            let offset = match dir {
                Dir::Forward => at,
                Dir::Reverse => at + 1,
            };
            match step(sid, offset, &mut last, input.get_earliest())? {
                Some(done) => return Ok(done),
                None => continue,
            }
        }
    }
    // The byte just past the span is look-around context; past the haystack, the end.
    let beyond = match dir {
        Dir::Forward => hay.get(span.end),
        Dir::Reverse => span.start.checked_sub(1).and_then(|i| hay.get(i)),
    };
    sid = match beyond {
        Some(&b) => dfa.next_state(cache, sid, b),
        None => dfa.next_eoi_state(cache, sid),
    }
    .map_err(|_| Halt::Quit)?;
    if sid.is_match() {
        last = Some(match dir {
            Dir::Forward => span.end,
            Dir::Reverse => span.start,
        });
    }
    Ok(last)
}

/// Reads a tagged state: `Some(answer)` when the walk is over.
fn step(
    sid: LazyStateID,
    offset: usize,
    last: &mut Option<usize>,
    earliest: bool,
) -> Result<Option<Option<usize>>, Halt> {
    if sid.is_match() {
        *last = Some(offset);
        return Ok(earliest.then_some(*last));
    }
    if sid.is_dead() {
        return Ok(Some(*last));
    }
    if sid.is_quit() {
        return Err(Halt::Quit);
    }
    Ok(None)
}
