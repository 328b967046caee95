use super::*;

/// A bucket fills one cache line (module comment).
#[test]
fn bucket_is_one_cache_line() {
    assert_eq!(std::mem::size_of::<Bucket>(), 64);
}

/// Shapes whose mask spans fit in 128 bits are packed, side by side;
/// wider ones are not. Values come back out of a packed key.
#[test]
fn packing() {
    use Field::*;
    let v4 = 0xffff_ffffu128;
    let five_tuple = [
        (EthType, 0xffff),
        (IpProto, 0xff),
        (Ipv4Src, v4),
        (Ipv4Dst, v4),
        (TcpDst, 0xffff),
    ];
    let s = spans(&five_tuple).expect("104 bits are packed");
    let offsets: Vec<u32> = s.iter().map(Span::offset).collect();
    assert_eq!(offsets, [0, 16, 24, 56, 88]);
    // A prefix keeps only its span: /24 is 24 bits at its low bit 8.
    let s = spans(&[(EthType, 0xffff), (Ipv4Dst, 0xffff_ff00)]).expect("40 bits");
    assert_eq!((s[1].shift, s[1].up, s[1].offset()), (8, true, 16));
    let key = s[0].put(0x0800) | s[1].put(0x0a01_02ff);
    assert_eq!((s[0].get(key), s[1].get(key)), (0x0800, 0x0a01_0200));
    // A whole IPv6 address fills the key exactly; anything more is wide.
    assert!(spans(&[(Ipv6Dst, u128::MAX)]).is_some());
    assert!(spans(&[(EthType, 0xffff), (Ipv6Dst, u128::MAX)]).is_none());
    assert!(spans(&[(Ipv6Src, u128::MAX << 64), (Ipv6Dst, u128::MAX << 64)]).is_some());
    assert!(spans(&[(Ipv6Src, u128::MAX << 63), (Ipv6Dst, u128::MAX << 64)]).is_none());
}
