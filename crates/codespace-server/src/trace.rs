//! W3C trace context: a `traceparent` in a request's `_meta` (SEP-414) makes the span of
//! that call in the server's log carry its trace id and its parent's span id, so the log
//! lines of one call are found by the trace the client started. A value that is not a valid
//! `traceparent` is ignored (never copied into the log).

use tracing::Span;

/// A valid `traceparent`'s parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceParent<'a> {
    pub(crate) trace_id: &'a str,
    pub(crate) parent_id: &'a str,
    pub(crate) sampled: bool,
}

/// Parses `version-trace_id-parent_id-flags` (W3C Trace Context, level 1): lowercase hex,
/// an all-zero trace or parent id is invalid, version `ff` is invalid, version `00` has
/// exactly four parts (a later version may append more).
pub(crate) fn parse(value: &str) -> Option<TraceParent<'_>> {
    let mut parts = value.split('-');
    let (version, trace_id, parent_id, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let zero = |s: &str| s.bytes().all(|b| b == b'0');
    let valid = hex(version, 2)
        && version != "ff"
        && hex(trace_id, 32)
        && !zero(trace_id)
        && hex(parent_id, 16)
        && !zero(parent_id)
        && hex(flags, 2)
        && (version != "00" || parts.next().is_none());
    let flags = u8::from_str_radix(flags, 16).ok()?;
    valid.then_some(TraceParent { trace_id, parent_id, sampled: flags & 1 == 1 })
}

/// The span one `tools/call` runs in: the tool (at most 64 characters of the name asked
/// for), the JSON-RPC request id, and the client's trace when it sent a valid one.
pub(crate) fn call_span(
    tool: &str,
    request: &impl std::fmt::Display,
    traceparent: Option<&str>,
) -> Span {
    let tool: String = tool.chars().take(64).collect();
    match traceparent.and_then(parse) {
        Some(t) => tracing::info_span!(
            "tool_call",
            tool = ?tool,
            request = %request,
            trace_id = t.trace_id,
            parent_id = t.parent_id,
            sampled = t.sampled,
        ),
        None => tracing::info_span!("tool_call", tool = ?tool, request = %request),
    }
}

#[cfg(test)]
mod tests;
