//! Internet checksum (RFC 1071), its incremental update (RFC 1624) and the
//! CRC32c used by SCTP (RFC 4960 appendix B, RFC 3309).
//!
//! The Internet checksum is the one's complement of the one's complement sum
//! of 16-bit big-endian words. One's complement addition is addition modulo
//! 0xffff, so it is linear: a byte at an even position (counted from the
//! start of the checksummed region) weighs `b << 8`, a byte at an odd
//! position weighs `b`. That lets [`update`] adjust a checksum for a change of
//! any byte range without re-reading the rest of the packet.

/// Adds `data` to a running 32-bit sum. `odd` says whether `data[0]` sits at
/// an odd position of the checksummed region. The sum is not folded.
#[inline]
pub fn sum_bytes(mut acc: u64, data: &[u8], odd: bool) -> u64 {
    let mut rest = data;
    if odd {
        if let Some((&first, tail)) = rest.split_first() {
            acc += u64::from(first);
            rest = tail;
        }
    }
    let mut chunks = rest.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let v = u64::from_be_bytes(w);
        // Four 16-bit words at once: add the two 32-bit halves.
        acc += (v >> 32) + (v & 0xffff_ffff);
    }
    let mut words = chunks.remainder().chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds a running sum into 16 bits (end-around carry).
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Full Internet checksum of `data` plus an initial (pseudo-header) sum:
/// the value to store in a checksum field that was zero while summing.
#[inline]
pub fn checksum(initial: u64, data: &[u8]) -> u16 {
    !fold(sum_bytes(initial, data, false))
}

/// RFC 1624 eqn. 3: `HC' = ~(~HC + ~m + m')`, where `m` is the sum of the
/// old bytes and `m'` the sum of the new ones. `odd` is the parity of the
/// changed range inside the checksummed region. `old` and `new` must have
/// the same length.
#[inline]
pub fn update(hc: u16, old: &[u8], new: &[u8], odd: bool) -> u16 {
    let m = fold(sum_bytes(0, old, odd));
    let m2 = fold(sum_bytes(0, new, odd));
    !fold(u64::from(!hc) + u64::from(!m) + u64::from(m2))
}

/// The one's complement difference `m' - m` of replacing `old` by `new`
/// (equal lengths), for bytes starting at an even position. For an odd
/// start, byte-swap the result (RFC 1071 §2(B): the sum is byte-order
/// independent).
#[inline]
pub fn delta(old: &[u8], new: &[u8]) -> u16 {
    fold(u64::from(!fold(sum_bytes(0, old, false))) + sum_bytes(0, new, false))
}

/// [`delta`] of a 32-bit big-endian word at an even position, on
/// integers: the sum of a word is the sum of its two 16-bit halves.
#[inline]
pub fn delta32(old: u32, new: u32) -> u16 {
    let m = fold(u64::from(old >> 16) + u64::from(old & 0xffff));
    fold(u64::from(!m) + u64::from(new >> 16) + u64::from(new & 0xffff))
}

/// [`delta`] of a 16-bit big-endian word at an even position.
#[inline]
pub fn delta16(old: u16, new: u16) -> u16 {
    fold(u64::from(!old) + u64::from(new))
}

/// Applies a [`delta`] to a stored checksum: `HC' = ~(~HC + delta)`.
#[inline]
pub fn apply_delta(hc: u16, delta: u16) -> u16 {
    !fold(u64::from(!hc) + u64::from(delta))
}

/// Sum of the IPv4 pseudo-header (RFC 793/768): addresses, protocol, length.
#[inline]
pub fn pseudo_v4(src: &[u8], dst: &[u8], proto: u8, len: usize) -> u64 {
    let acc = sum_bytes(0, src, false);
    let acc = sum_bytes(acc, dst, false);
    acc + u64::from(proto) + (len as u64 & 0xffff)
}

/// Sum of the IPv6 pseudo-header (RFC 8200 §8.1).
#[inline]
pub fn pseudo_v6(src: &[u8], dst: &[u8], next_header: u8, len: usize) -> u64 {
    let acc = sum_bytes(0, src, false);
    let acc = sum_bytes(acc, dst, false);
    acc + u64::from(next_header) + (len as u64 & 0xffff_ffff)
}

/// CRC32c (Castagnoli, reflected polynomial 0x82f63b78) lookup tables for
/// "slicing by 4": `CRC32C_TABLE[k][b]` is the CRC of byte `b` followed by
/// `k` zero bytes. Built at compile time.
static CRC32C_TABLE: [[u32; 256]; 4] = build_crc32c_table();

const fn build_crc32c_table() -> [[u32; 256]; 4] {
    let mut t = [[0u32; 256]; 4];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82f6_3b78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut k = 1;
        while k < 4 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            k += 1;
        }
        i += 1;
    }
    t
}

/// Continues a CRC32c over `data` (state is the pre-inverted register).
#[inline]
fn crc32c_update(mut crc: u32, data: &[u8]) -> u32 {
    let t = &CRC32C_TABLE;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let v = crc ^ u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        crc = t[3][(v & 0xff) as usize]
            ^ t[2][((v >> 8) & 0xff) as usize]
            ^ t[1][((v >> 16) & 0xff) as usize]
            ^ t[0][(v >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = (crc >> 8) ^ t[0][((crc ^ u32::from(b)) & 0xff) as usize];
    }
    crc
}

/// CRC32c of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    !crc32c_update(!0, data)
}

/// SCTP checksum of a whole SCTP packet, computed as if its checksum field
/// (bytes 8..12) were zero. The result is stored little-endian in the packet
/// (RFC 4960 appendix B). Returns `None` if `sctp` is shorter than the
/// 12-byte common header.
pub fn sctp_crc(sctp: &[u8]) -> Option<u32> {
    let head = sctp.get(..8)?;
    let tail = sctp.get(12..)?;
    let crc = crc32c_update(!0, head);
    let crc = crc32c_update(crc, &[0; 4]);
    Some(!crc32c_update(crc, tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3 example words: 0001 f203 f4f5 f6f7 -> sum ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum_bytes(0, &data, false)), 0xddf2);
        assert_eq!(checksum(0, &data), !0xddf2);
    }

    #[test]
    fn ipv4_header_checksum() {
        // A classic IPv4 header with checksum 0xb861.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(0, &h), 0xb861);
        h[10] = 0xb8;
        h[11] = 0x61;
        assert_eq!(checksum(0, &h), 0);
    }

    #[test]
    fn incremental_matches_full_odd_and_even() {
        let mut data: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37)).collect();
        let hc = checksum(0, &data);
        for (off, new) in [(3usize, vec![0xaa, 0xbb, 0xcc]), (8, vec![1, 2, 3, 4])] {
            let old = data[off..off + new.len()].to_vec();
            let before = checksum(0, &data);
            data[off..off + new.len()].copy_from_slice(&new);
            let inc = update(before, &old, &new, off % 2 == 1);
            assert_eq!(inc, checksum(0, &data));
            let mut dl = delta(&old, &new);
            if off % 2 == 1 {
                dl = dl.swap_bytes();
            }
            assert_eq!(apply_delta(before, dl), inc);
        }
        assert_ne!(hc, checksum(0, &data));
    }

    #[test]
    fn crc32c_known_values() {
        // RFC 3720 B.4 test vectors.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62a8_ab43);
        let inc: Vec<u8> = (0..32).collect();
        assert_eq!(crc32c(&inc), 0x46dd_794e);
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }
}
