//! The `words!` macro every shared word is declared with, and [`UnknownWord`], the refusal
//! of a text that is none of a word's values.
//!
//! One declaration gives a word its variants, wire texts, `ALL`, `as_str`, `parse`,
//! `Display`, `FromStr`, serde (each variant under its text) and `JsonSchema` (an enum of
//! those texts), so no layer keeps a twin of it and nothing converts one into another.

use std::fmt;

/// Declares a word: a fieldless enum whose values are written as `Variant = "text"`.
///
/// Outer attributes (docs, an extra `#[derive(Default)]`) and variant attributes (docs,
/// `#[default]`) pass through; variant docs reach the JSON schema, so explanations meant
/// for the code only are `//` comments.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            serde::Serialize,
            serde::Deserialize,
            schemars::JsonSchema
        )]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// Every value's text, in declaration order.
            pub const TEXTS: [&'static str; [$($text),+].len()] = [$($text),+];

            /// The stored and wire form.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The inverse of `as_str`; `None` for any other text.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::UnknownWord;

            fn from_str(text: &str) -> Result<$name, $crate::UnknownWord> {
                $name::parse(text).ok_or_else(|| $crate::UnknownWord {
                    word: stringify!($name),
                    found: text.to_owned(),
                    allowed: &$name::TEXTS,
                })
            }
        }
    };
}

/// A text that is none of a word's values: which word, the text, and the values it allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWord {
    /// The word's type name, e.g. `Profile`.
    pub word: &'static str,
    /// The text that was given.
    pub found: String,
    /// Every text the word accepts, in declaration order.
    pub allowed: &'static [&'static str],
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} `{}`, expected one of ", self.word, self.found)?;
        for (i, text) in self.allowed.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}`{text}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownWord {}
