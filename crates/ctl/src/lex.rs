//! Splitting ovs-ofctl style strings into `key[=|:|(]value` tokens.
//!
//! Tokens are separated by commas or white space outside parentheses, so
//! `write_actions(output:1,group:2)` is one token. The key ends at the first
//! `=`, `:` or `(`; for `(` the value runs to the matching `)`. Every token
//! keeps the byte offsets of its key and value in the *original* input so that
//! errors can point at them, also for nested values (the offsets of a nested
//! lex are shifted by its base).

use crate::syntax_error::SyntaxError;

/// One `key[=value]` token with positions in the original input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    pub key: &'a str,
    /// Byte offset of `key`.
    pub key_at: usize,
    /// The value, if a `=`, `:` or `(...)` followed the key.
    pub value: Option<&'a str>,
    /// Byte offset of `value` (meaningful only if `value` is `Some`).
    pub value_at: usize,
    /// Which separator introduced the value (`=`, `:` or `(`).
    pub sep: Option<char>,
    /// The whole token text and its offset.
    pub text: &'a str,
    pub text_at: usize,
}

impl<'a> Token<'a> {
    /// An error pointing at the whole token.
    pub fn err(&self, msg: impl Into<String>) -> SyntaxError {
        SyntaxError::new(msg, self.text_at, self.text.len())
    }

    /// An error pointing at the key.
    pub fn key_err(&self, msg: impl Into<String>) -> SyntaxError {
        SyntaxError::new(msg, self.key_at, self.key.len())
    }

    /// An error pointing at the value (or the key if there is none).
    pub fn value_err(&self, msg: impl Into<String>) -> SyntaxError {
        match self.value {
            Some(v) => SyntaxError::new(msg, self.value_at, v.len()),
            None => self.key_err(msg),
        }
    }

    /// The value, or an error saying the key needs one.
    pub fn need_value(&self) -> Result<&'a str, SyntaxError> {
        match self.value {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(self.key_err(format!("\"{}\" needs a value", self.key))),
        }
    }
}

fn is_sep(c: u8) -> bool {
    c == b',' || c.is_ascii_whitespace()
}

/// Split `s` (which starts at byte `base` of the original input) into tokens.
pub fn tokenize(s: &str, base: usize) -> Result<Vec<Token<'_>>, SyntaxError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if is_sep(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut depth = 0usize;
        let mut open_at = 0;
        while i < b.len() && (depth > 0 || !is_sep(b[i])) {
            match b[i] {
                b'(' => {
                    if depth == 0 {
                        open_at = i;
                    }
                    depth += 1;
                }
                b')' => {
                    if depth == 0 {
                        return Err(SyntaxError::new("unbalanced \")\"", base + i, 1));
                    }
                    depth -= 1;
                    if depth == 0 && b.get(i + 1).is_some_and(|c| !is_sep(*c)) {
                        return Err(SyntaxError::new(
                            "unexpected text after \")\"",
                            base + i + 1,
                            1,
                        ));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if depth > 0 {
            return Err(SyntaxError::new("unbalanced \"(\"", base + open_at, 1));
        }
        out.push(split_token(&s[start..i], base + start));
    }
    Ok(out)
}

/// Split one token's text at its key separator.
pub fn split_token(text: &str, at: usize) -> Token<'_> {
    let key_end = text.find(['=', ':', '(']).unwrap_or(text.len());
    let key = &text[..key_end];
    let (value, value_at, sep) = match text[key_end..].chars().next() {
        None => (None, at + key_end, None),
        Some('(') => {
            let inner_end = if text.ends_with(')') {
                text.len() - 1
            } else {
                text.len()
            };
            let inner = text.get(key_end + 1..inner_end).unwrap_or("");
            (Some(inner), at + key_end + 1, Some('('))
        }
        Some(c) => (Some(&text[key_end + 1..]), at + key_end + 1, Some(c)),
    };
    Token {
        key,
        key_at: at,
        value,
        value_at,
        sep,
        text,
        text_at: at,
    }
}

/// Find the top-level `actions=` (or `action=`) token start, if any: the
/// action list swallows the rest of the string, commas included.
pub fn find_actions(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    let mut token_start = true;
    while i < b.len() {
        let c = b[i];
        if depth == 0 && token_start {
            for kw in ["actions=", "actions:", "action=", "action:"] {
                if s[i..].starts_with(kw) {
                    return Some((i, i + kw.len()));
                }
            }
        }
        match c {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        token_start = is_sep(c);
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_offsets() {
        let t = tokenize("a=1, b:2,c(x=1,y) d", 10).unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!((t[0].key, t[0].value, t[0].value_at), ("a", Some("1"), 12));
        assert_eq!((t[1].key, t[1].value, t[1].key_at), ("b", Some("2"), 15));
        assert_eq!(
            (t[2].key, t[2].value, t[2].sep),
            ("c", Some("x=1,y"), Some('('))
        );
        assert_eq!((t[3].key, t[3].value), ("d", None));
    }

    #[test]
    fn unbalanced() {
        assert_eq!(tokenize("a(b", 0).unwrap_err().offset, 1);
        assert_eq!(tokenize("ab)", 0).unwrap_err().offset, 2);
        assert_eq!(tokenize("a(b)c", 0).unwrap_err().offset, 4);
        assert!(tokenize("a(b(c)d),e", 0).is_ok());
    }

    #[test]
    fn actions_position() {
        assert_eq!(find_actions("ip,actions=output:1"), Some((3, 11)));
        assert_eq!(find_actions("write_actions(x)"), None);
        assert_eq!(find_actions("ip"), None);
    }
}
