//! Hot-path costs: parse a 64-byte UDP/IPv4 and TCP/IPv4 frame; one
//! set-field (IPv4 source) with its incremental checksum updates.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use packet::{parse, set_field, FlowKey, PacketBuf, SetField};
use std::hint::black_box;

/// Ethernet / IPv4 10.0.0.1 -> 10.0.0.2 / UDP 1234 -> 80 / 22 bytes of
/// zero-padded to 64 bytes.
fn frame64() -> Vec<u8> {
    let mut f = vec![
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45,
        0x00, 0x00, 0x32, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x01,
        0x0a, 0x00, 0x00, 0x02, 0x04, 0xd2, 0x00, 0x50, 0x00, 0x1e, 0x00, 0x00,
    ];
    f.resize(64, 0xab);
    let mut key = FlowKey::new(1);
    let _ = parse(&f, &mut key);
    packet::recompute_checksums(&mut f, &key);
    f
}

/// Ethernet / IPv4 10.0.0.1 -> 10.0.0.2 / TCP 1234 -> 80 (SYN), padded
/// to 64 bytes.
fn tcp64() -> Vec<u8> {
    let mut f = vec![
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45,
        0x00, 0x00, 0x32, 0x00, 0x01, 0x00, 0x00, 0x40, 0x06, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x01,
        0x0a, 0x00, 0x00, 0x02, 0x04, 0xd2, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff,
        0xff, 0, 0, 0, 0,
    ];
    f.resize(64, 0xab);
    let mut key = FlowKey::new(1);
    parse(&f, &mut key).expect("a TCP frame");
    packet::recompute_checksums(&mut f, &key);
    f
}

fn bench(c: &mut Criterion) {
    let f = frame64();
    let mut g = c.benchmark_group("packet");
    g.throughput(Throughput::Elements(1));

    let mut key = FlowKey::new(1);
    g.bench_function("parse_udp4_64B", |b| {
        b.iter(|| {
            let r = parse(black_box(&f), &mut key);
            black_box(&key);
            r
        })
    });

    let t = tcp64();
    let mut key = FlowKey::new(1);
    g.bench_function("parse_tcp4_64B", |b| {
        b.iter(|| {
            let r = parse(black_box(&t), &mut key);
            black_box(&key);
            r
        })
    });

    let mut buf = PacketBuf::from_slice(&f);
    let mut key = FlowKey::new(1);
    let _ = parse(buf.data(), &mut key);
    let mut src = 0x0a00_0001u32;
    g.bench_function("set_ipv4_src_with_checksums", |b| {
        b.iter(|| {
            src = src.wrapping_add(1);
            set_field(&mut buf, &mut key, SetField::Ipv4Src(black_box(src)))
        })
    });

    let mut buf = PacketBuf::from_slice(&f);
    g.bench_function("parse_then_set_ipv4_src", |b| {
        b.iter(|| {
            let mut key = FlowKey::new(1);
            let _ = parse(buf.data(), &mut key);
            src = src.wrapping_add(1);
            set_field(&mut buf, &mut key, SetField::Ipv4Src(black_box(src)))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
