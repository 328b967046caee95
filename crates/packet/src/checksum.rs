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
///
/// Every fold step keeps the sum modulo 0xffff and keeps it non-zero if
/// it was, so the result is fixed by the sum alone: 0 for 0, else the one
/// value of `1..=0xffff` congruent to it. Four steps always get there
/// (below 2^33, 0x2ffff, 0x10002, then 0x10000), without the loop's
/// data-dependent branch.
#[inline]
pub fn fold(acc: u64) -> u16 {
    let acc = (acc & 0xffff_ffff) + (acc >> 32);
    let acc = (acc & 0xffff) + (acc >> 16);
    let acc = (acc & 0xffff) + (acc >> 16);
    let acc = (acc & 0xffff) + (acc >> 16);
    acc as u16
}

/// One's complement sum of two 16-bit values: [`fold`] of `a + b`, in
/// one step (a sum of two 16-bit values is below 0x1ffff, so one fold
/// brings it to 16 bits).
#[inline]
pub fn add(a: u16, b: u16) -> u16 {
    let s = u32::from(a) + u32::from(b);
    ((s & 0xffff) + (s >> 16)) as u16
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
/// (A fold of a sum of several 16-bit values is the chain of their
/// [`add`]s: both are the one value `fold` defines for the sum.)
#[inline]
pub fn delta32(old: u32, new: u32) -> u16 {
    let m = add((old >> 16) as u16, old as u16);
    add(add(!m, (new >> 16) as u16), new as u16)
}

/// [`delta`] of a 16-bit big-endian word at an even position.
#[inline]
pub fn delta16(old: u16, new: u16) -> u16 {
    add(!old, new)
}

/// Applies a [`delta`] to a stored checksum: `HC' = ~(~HC + delta)`.
#[inline]
pub fn apply_delta(hc: u16, delta: u16) -> u16 {
    !add(!hc, delta)
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

    /// The fold as the end-around carry loop it stands for.
    fn fold_loop(mut acc: u64) -> u16 {
        while acc > 0xffff {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        acc as u16
    }

    /// `fold`, `add` and the deltas built on them equal the carry loop, on
    /// the edges (0, 0xffff, carries out of every step) and on xorshift
    /// values.
    #[test]
    fn folds_equal_the_carry_loop() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let edges = [
            0u64,
            1,
            0xfffe,
            0xffff,
            0x1_0000,
            0x1_fffe,
            0x2_ffff,
            0xffff_ffff,
            0x1_ffff_fffe,
            u64::MAX >> 1,
            u64::MAX - 0xffff,
            // Needs the fourth step: 0x1_0000_ffff, 0x1_ffff, 0x1_0000.
            0xffff_ffff_0001_0000,
        ];
        let mut values: Vec<u64> = edges.to_vec();
        values.extend((0..100_000).map(|i| next() >> (i % 64)));
        for &v in &values {
            assert_eq!(fold(v), fold_loop(v), "{v:#x}");
        }
        let small = [0u16, 1, 0x7fff, 0x8000, 0xfffe, 0xffff];
        let mut pairs: Vec<(u16, u16)> = small
            .iter()
            .flat_map(|&a| small.iter().map(move |&b| (a, b)))
            .collect();
        pairs.extend((0..100_000).map(|_| (next() as u16, (next() >> 16) as u16)));
        let words: Vec<u32> = pairs
            .iter()
            .map(|&(a, b)| u32::from(a) << 16 | u32::from(b))
            .collect();
        for (i, &(a, b)) in pairs.iter().enumerate() {
            let (wa, wb) = (u64::from(a), u64::from(b));
            assert_eq!(add(a, b), fold_loop(wa + wb));
            assert_eq!(delta16(a, b), fold_loop(u64::from(!a) + wb));
            assert_eq!(apply_delta(a, b), !fold_loop(u64::from(!a) + wb));
            let (o, n) = (words[i], words[(i * 7 + 3) % words.len()]);
            let m = fold_loop(u64::from(o >> 16) + u64::from(o & 0xffff));
            let want = fold_loop(u64::from(!m) + u64::from(n >> 16) + u64::from(n & 0xffff));
            assert_eq!(delta32(o, n), want, "{o:#x} -> {n:#x}");
            assert_eq!(delta32(o, o), delta(&o.to_be_bytes(), &o.to_be_bytes()));
        }
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
