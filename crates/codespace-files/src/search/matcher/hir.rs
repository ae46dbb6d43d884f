//! The pattern's syntax tree as grep-regex builds it for line search: parsed wrapped in
//! `(?:…)`, translated over bytes, then stripped of `\n` so that no match spans two lines.

use regex_syntax::ast::parse::ParserBuilder;
use regex_syntax::hir::translate::TranslatorBuilder;
use regex_syntax::hir::{self, Hir, HirKind};

/// grep-regex's nesting limit: deeper patterns are refused the same way.
const NEST_LIMIT: u32 = 250;

/// The line-search syntax tree of `pattern`, or why it is invalid (grep-regex's wording).
pub(super) fn parse(pattern: &str, case_insensitive: bool) -> Result<Hir, String> {
    // Wrapped as grep-regex wraps it, so a syntax error quotes the same text.
    let wrapped = format!("(?:{pattern})");
    let ast = ParserBuilder::new()
        .nest_limit(NEST_LIMIT)
        .build()
        .parse(&wrapped)
        .map_err(|e| e.to_string())?;
    let hir = TranslatorBuilder::new()
        .utf8(false)
        .case_insensitive(case_insensitive)
        .build()
        .translate(&wrapped, &ast)
        .map_err(|e| e.to_string())?;
    strip_newline(hir)
}

/// grep-regex's `strip_from_match` for `\n`: a literal newline is refused, a class loses
/// `\n` (refused if nothing else is left). The searcher then may hand the matcher many
/// lines at once and trust every match to lie within one line.
fn strip_newline(expr: Hir) -> Result<Hir, String> {
    const NL: u8 = b'\n';
    let refused = || Err("the literal \"\\n\" is not allowed in a regex".to_owned());
    Ok(match expr.into_kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(hir::Literal(lit)) => {
            if lit.contains(&NL) {
                return refused();
            }
            Hir::literal(lit)
        }
        HirKind::Class(hir::Class::Unicode(mut cls)) => {
            if !cls.ranges().is_empty() {
                let nl = hir::ClassUnicodeRange::new('\n', '\n');
                cls.difference(&hir::ClassUnicode::new([nl]));
                if cls.ranges().is_empty() {
                    return refused();
                }
            }
            Hir::class(hir::Class::Unicode(cls))
        }
        HirKind::Class(hir::Class::Bytes(mut cls)) => {
            if !cls.ranges().is_empty() {
                let nl = hir::ClassBytesRange::new(NL, NL);
                cls.difference(&hir::ClassBytes::new([nl]));
                if cls.ranges().is_empty() {
                    return refused();
                }
            }
            Hir::class(hir::Class::Bytes(cls))
        }
        HirKind::Look(look) => Hir::look(look),
        HirKind::Repetition(mut rep) => {
            rep.sub = Box::new(strip_newline(*rep.sub)?);
            Hir::repetition(rep)
        }
        HirKind::Capture(mut cap) => {
            cap.sub = Box::new(strip_newline(*cap.sub)?);
            Hir::capture(cap)
        }
        HirKind::Concat(subs) => {
            Hir::concat(subs.into_iter().map(strip_newline).collect::<Result<_, _>>()?)
        }
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.into_iter().map(strip_newline).collect::<Result<_, _>>()?)
        }
    })
}
