//! Text a person reads, made visible: control characters (C0, DEL, C1), Unicode format
//! characters (bidirectional marks, embeddings, overrides and isolates, zero-width
//! characters, the byte order mark) and the line and paragraph separators are written as
//! `\u{XXXX}`, so a name can never reorder, hide or break the text it is shown in. And the
//! names a patch may create: one with a control character, a separator or a bidirectional
//! formatting character is refused before anything is held or written.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The bidirectional formatting characters: ALM, LRM, RLM, the embeddings and overrides
/// (LRE, RLE, PDF, LRO, RLO) and the isolates (LRI, RLI, FSI, PDI).
fn is_bidi_format(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// C0, DEL and C1.
fn is_control(c: char) -> bool {
    c.is_control()
}

/// The line and paragraph separators (which some renderers break lines at).
fn is_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// Unicode's format characters (general category Cf) beyond the bidirectional ones: they
/// draw nothing.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{0600}'..='\u{0605}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206A}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// Whether `c` is written escaped when shown to a person.
pub fn is_hidden(c: char) -> bool {
    is_control(c) || is_separator(c) || is_bidi_format(c) || is_invisible_format(c)
}

/// Whether `c` may not appear in a name a patch creates (`*** Add File:`, `*** Move to:`):
/// a control character (C0, DEL, C1), a line or paragraph separator, or a bidirectional
/// formatting character. Other format characters (a zero-width joiner in an emoji, say)
/// are allowed, and shown escaped.
pub fn is_refused_in_name(c: char) -> bool {
    is_control(c) || is_separator(c) || is_bidi_format(c)
}

/// The first character of `name` a patch may not create a name with, if any.
pub fn refused_in_name(name: &str) -> Option<char> {
    name.chars().find(|c| is_refused_in_name(*c))
}

/// `text` with every hidden character written as `\u{XXXX}`; with `keep_lines`, a line
/// feed (and a tab) stays as it is, for text whose lines a person reads as lines.
pub fn escape(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let hidden = |c: char| is_hidden(c) && !(keep_lines && matches!(c, '\n' | '\t'));
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:04X}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON text (as serde_json writes it, every C0 character in a string already escaped)
/// with every other hidden character written as a JSON escape (`\u202e`, a pair of them
/// beyond the first plane): still the same JSON, and nothing in it reorders or hides the
/// text around it. Line feeds, tabs and carriage returns stay: outside strings they are
/// the layout.
pub fn escape_json(json: &str) -> Cow<'_, str> {
    let hidden = |c: char| is_hidden(c) && !matches!(c, '\n' | '\t' | '\r');
    if !json.chars().any(hidden) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if hidden(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
