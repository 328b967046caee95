//! Byte-level helpers shared by every codec module.
//!
//! `Reader` is a bounds-checked cursor over an untrusted byte slice. Every read
//! returns `Result`, so decoders never index out of bounds and never panic. A
//! reader carries the error it reports when the input runs short
//! (`len_err`): a truncated action is `BAD_ACTION/BAD_LEN`, a truncated match is
//! `BAD_MATCH/BAD_LEN`, a truncated message body is `BAD_REQUEST/BAD_LEN`, and so
//! on. Decoders of nested TLVs check the TLV's own length field first and then
//! decode the TLV from a `sub` reader that cannot see past the TLV's end.
//!
//! `Writer` is implemented for `Vec<u8>`: big-endian puts plus a way to patch a
//! length field once the object's size is known.

use crate::error::{BadRequestCode, DecodeError, ErrorCode};

/// Bounds-checked big-endian cursor over untrusted bytes.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    len_err: ErrorCode,
}

impl<'a> Reader<'a> {
    /// A reader that reports `len_err` when a read runs past the end.
    pub fn new(buf: &'a [u8], len_err: ErrorCode) -> Self {
        Reader {
            buf,
            pos: 0,
            len_err,
        }
    }

    /// A reader for a whole message body (short input is `BAD_REQUEST/BAD_LEN`).
    pub fn message(buf: &'a [u8]) -> Self {
        Self::new(buf, ErrorCode::BadRequest(BadRequestCode::BadLen))
    }

    /// The error this reader reports for short input.
    pub fn len_err(&self) -> ErrorCode {
        self.len_err
    }

    /// A `DecodeError` with this reader's length error and the given context.
    pub fn short(&self, what: &'static str) -> DecodeError {
        DecodeError::new(self.len_err, what)
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(self.short(what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?[0])
    }

    pub fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    /// A fixed-size array (MAC addresses, IPv6 addresses, padded names).
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let b = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        self.take(n, what)
    }

    /// Skip `n` padding bytes. Padding content is ignored on decode (the spec
    /// says senders zero it; receivers must not care).
    pub fn pad(&mut self, n: usize) -> Result<(), DecodeError> {
        self.take(n, "padding").map(|_| ())
    }

    /// Everything not yet read.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    /// Look at the next big-endian u16 without consuming it.
    pub fn peek_u16(&self, what: &'static str) -> Result<u16, DecodeError> {
        if self.remaining() < 2 {
            return Err(self.short(what));
        }
        Ok(u16::from_be_bytes([
            self.buf[self.pos],
            self.buf[self.pos + 1],
        ]))
    }

    /// Look at the big-endian u16 `off` bytes ahead without consuming anything.
    pub fn peek_u16_at(&self, off: usize, what: &'static str) -> Result<u16, DecodeError> {
        if self.remaining() < off + 2 {
            return Err(self.short(what));
        }
        let p = self.pos + off;
        Ok(u16::from_be_bytes([self.buf[p], self.buf[p + 1]]))
    }

    /// A reader over the next `n` bytes (consumed from this one), reporting the
    /// same length error.
    pub fn sub(&mut self, n: usize, what: &'static str) -> Result<Reader<'a>, DecodeError> {
        let len_err = self.len_err;
        self.sub_with(n, len_err, what)
    }

    /// A reader over the next `n` bytes that reports `len_err` when short.
    /// Running short of the *outer* reader is reported with the outer error.
    pub fn sub_with(
        &mut self,
        n: usize,
        len_err: ErrorCode,
        what: &'static str,
    ) -> Result<Reader<'a>, DecodeError> {
        let b = self.take(n, what)?;
        Ok(Reader::new(b, len_err))
    }

    /// Fail with `len_err` unless every byte was consumed.
    pub fn finish(&self, what: &'static str) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.short(what))
        }
    }
}

/// Big-endian writer for encoders. Encoding never fails: the typed structures
/// only hold values that can be encoded.
pub trait Writer {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
    fn put_bytes(&mut self, b: &[u8]);
    /// `n` zero bytes of padding.
    fn put_zeros(&mut self, n: usize);
    /// Overwrite the u16 at `pos` (a length field written as a placeholder).
    fn patch_u16(&mut self, pos: usize, v: u16);
    /// Overwrite the u32 at `pos`.
    fn patch_u32(&mut self, pos: usize, v: u32);
    /// Pad with zeros until the length since `start` is a multiple of 8.
    fn pad_to_8(&mut self, start: usize);
}

impl Writer for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_bytes(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
    fn put_zeros(&mut self, n: usize) {
        self.resize(self.len() + n, 0);
    }
    fn patch_u16(&mut self, pos: usize, v: u16) {
        self[pos..pos + 2].copy_from_slice(&v.to_be_bytes());
    }
    fn patch_u32(&mut self, pos: usize, v: u32) {
        self[pos..pos + 4].copy_from_slice(&v.to_be_bytes());
    }
    fn pad_to_8(&mut self, start: usize) {
        let len = self.len() - start;
        self.put_zeros(padding_to_8(len));
    }
}

/// Bytes of padding that bring `len` up to a multiple of 8.
pub const fn padding_to_8(len: usize) -> usize {
    (8 - len % 8) % 8
}

/// Encode a fixed-size, NUL-padded string field (port names, descriptions).
/// Longer strings are cut so that at least one NUL terminates the field.
pub fn put_fixed_str(w: &mut Vec<u8>, s: &str, size: usize) {
    let b = s.as_bytes();
    let n = b.len().min(size.saturating_sub(1));
    w.put_bytes(&b[..n]);
    w.put_zeros(size - n);
}

/// Decode a fixed-size, NUL-padded string field: the bytes before the first NUL.
/// Invalid UTF-8 is replaced, never rejected (these are informational strings).
pub fn get_fixed_str(
    r: &mut Reader<'_>,
    size: usize,
    what: &'static str,
) -> Result<String, DecodeError> {
    let b = r.bytes(size, what)?;
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let mut s = String::from_utf8_lossy(&b[..end]).into_owned();
    // Keep what `put_fixed_str` can write back (size - 1 bytes and a NUL), so
    // decode(encode(x)) == x even for unterminated or non-UTF-8 names.
    let mut cut = s.len().min(size.saturating_sub(1));
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{BadActionCode, ErrorCode};

    #[test]
    fn short_reads_report_the_readers_error() {
        let mut r = Reader::new(&[1, 2, 3], ErrorCode::BadAction(BadActionCode::BadLen));
        assert_eq!(r.u16("x").unwrap(), 0x0102);
        let e = r.u16("y").unwrap_err();
        assert_eq!(e.code, ErrorCode::BadAction(BadActionCode::BadLen));
        // a failed read consumes nothing
        assert_eq!(r.u8("z").unwrap(), 3);
    }

    #[test]
    fn fixed_strings() {
        let mut w = Vec::new();
        put_fixed_str(&mut w, "eth0", 16);
        assert_eq!(w.len(), 16);
        let mut r = Reader::message(&w);
        assert_eq!(get_fixed_str(&mut r, 16, "name").unwrap(), "eth0");
        let mut w = Vec::new();
        put_fixed_str(&mut w, "a-very-long-interface-name", 16);
        assert_eq!(w.len(), 16);
        assert_eq!(w[15], 0);
        // unterminated and non-UTF-8 input decodes to what encodes back
        let raw = [0xffu8; 16];
        let s = get_fixed_str(&mut Reader::message(&raw), 16, "name").unwrap();
        let mut w = Vec::new();
        put_fixed_str(&mut w, &s, 16);
        assert_eq!(
            get_fixed_str(&mut Reader::message(&w), 16, "name").unwrap(),
            s
        );
    }

    #[test]
    fn padding() {
        assert_eq!(padding_to_8(0), 0);
        assert_eq!(padding_to_8(4), 4);
        assert_eq!(padding_to_8(8), 0);
        assert_eq!(padding_to_8(13), 3);
    }
}
