//! Syntax errors that point at the offending token.
//!
//! Every parser in this crate works on one input string and reports the byte
//! offset and length of the token it refuses. [`SyntaxError::render`] echoes
//! the input with a caret line under that token:
//!
//! ```text
//! error: unknown field "nw_srcc" at column 19
//!   table=0,priority=1,nw_srcc=10.0.0.1,actions=drop
//!                      ^^^^^^^
//! ```

use std::fmt;

/// A parse error located in the input string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong, without position (e.g. `unknown field "nw_srcc"`).
    pub message: String,
    /// Byte offset of the bad token in the input.
    pub offset: usize,
    /// Byte length of the bad token (at least 1 when rendered).
    pub len: usize,
}

impl SyntaxError {
    pub fn new(message: impl Into<String>, offset: usize, len: usize) -> Self {
        SyntaxError {
            message: message.into(),
            offset,
            len,
        }
    }

    /// 1-based column of the bad token (counted in characters).
    pub fn column(&self, input: &str) -> usize {
        let off = self.offset.min(input.len());
        input.char_indices().take_while(|(i, _)| *i < off).count() + 1
    }

    /// The multi-line message: the error, the input echoed, a caret line.
    pub fn render(&self, input: &str) -> String {
        let col = self.column(input);
        let width = input
            .get(self.offset.min(input.len())..(self.offset + self.len).min(input.len()))
            .map(|s| s.chars().count())
            .unwrap_or(0)
            .max(1);
        format!(
            "error: {} at column {}\n  {}\n  {}{}",
            self.message,
            col,
            input,
            " ".repeat(col - 1),
            "^".repeat(width)
        )
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for SyntaxError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_under_token() {
        let input = "table=0,priority=1,nw_srcc=10.0.0.1,actions=drop";
        let e = SyntaxError::new("unknown field \"nw_srcc\"", 19, 7);
        let r = e.render(input);
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[0], "error: unknown field \"nw_srcc\" at column 20");
        assert_eq!(lines[1], format!("  {input}"));
        assert_eq!(lines[2], format!("  {}^^^^^^^", " ".repeat(19)));
    }
}
