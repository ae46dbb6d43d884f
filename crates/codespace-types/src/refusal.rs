//! [`LineDifference`]: how the file line nearest to a line a patch expected differs from it,
//! as a refused patch reports it.

words! {
    /// How the nearest file line differs from the line the patch expected. The matcher
    /// already tolerates leading and trailing whitespace and typographic punctuation, so a
    /// line that differs only in those never causes a refusal.
    pub enum LineDifference {
        /// Only whitespace inside the line differs (spaces versus tabs, doubled spaces).
        Whitespace = "whitespace",
        /// The indentation differs, and otherwise only whitespace: the line was re-indented
        /// or reformatted.
        Indentation = "indentation",
        /// Exactly one token (a word, a number, one punctuation mark) differs.
        Token = "token",
        /// Several tokens differ.
        Text = "text",
        /// The lines are all there, at this line, but where the chunk may not match: above
        /// an earlier chunk's lines, or not at the end of the file for a chunk that ends
        /// with `*** End of File`.
        Position = "position",
    }
}
