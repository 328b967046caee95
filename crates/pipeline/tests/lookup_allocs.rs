//! Flow table lookups allocate nothing, whatever structure a table uses
//! (linear scan, exact hash, LPM trie (with tuple space subtables beside
//! it), tuple space search): a counting
//! allocator (`ports::alloc_count`, which holds the `unsafe` for it)
//! watches the lookups, which must also return the expected entries.

use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, FlowMod};
use ofp::oxm::{Match, OxmField};
use ofp::port::port_no;
use packet::{Field, FlowKey};
use pipeline::Pipeline;
use std::net::{Ipv4Addr, Ipv6Addr};

#[global_allocator]
static ALLOC: ports::alloc_count::Counting = ports::alloc_count::Counting;

fn flow(priority: u16, fields: Vec<OxmField>, cookie: u64) -> FlowMod {
    FlowMod {
        cookie,
        cookie_mask: 0,
        table_id: 0,
        command: cmd::ADD,
        idle_timeout: 0,
        hard_timeout: 0,
        priority,
        buffer_id: u32::MAX,
        out_port: port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: Match::new(fields),
        instructions: vec![Instruction::ApplyActions(vec![])],
    }
}

fn mac(i: u64) -> [u8; 6] {
    let b = (i | 0x0200_0000_0000).to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

fn table(flows: &[FlowMod]) -> Pipeline {
    let mut p = Pipeline::new(1);
    for f in flows {
        p.flow_mod(f, 0).expect("flow-mod");
    }
    p
}

fn key() -> FlowKey {
    let mut k = FlowKey::new(1);
    for f in [Field::EthDst, Field::EthType] {
        k.present.insert(f);
    }
    k
}

fn v4(k: &mut FlowKey, src: u32, dst: u32) {
    k.eth_type = 0x0800;
    for f in [
        Field::Ipv4Src,
        Field::Ipv4Dst,
        Field::IpProto,
        Field::TcpDst,
    ] {
        k.present.insert(f);
    }
    k.ipv4_src = src;
    k.ipv4_dst = dst;
    k.ip_proto = 6;
    k.tp_dst = 80;
}

/// Looks every key up (with and without counters) under the counting
/// allocator; returns the cookies found.
fn lookups(p: &mut Pipeline, keys: &[FlowKey], kind: &str) -> Vec<Option<u64>> {
    assert_eq!(p.table(0).map(|t| t.classifier_kind()), Some(kind));
    let mut found = vec![None; keys.len()];
    let ((), allocs) = ports::alloc_count::count(|| {
        let Some(t) = p.table_mut(0) else { return };
        for (k, slot) in keys.iter().zip(found.iter_mut()) {
            let pos = t.lookup(k);
            *slot = pos.and_then(|i| t.entry(i)).map(|e| e.cookie());
            assert_eq!(t.peek(k).map(|e| e.cookie()), *slot);
        }
    });
    assert_eq!(allocs, 0, "heap allocations in {kind} lookups");
    found
}

#[test]
fn lookups_do_not_allocate() {
    // Linear: a few mixed shapes.
    let mut p = table(&[
        flow(30, vec![OxmField::InPort(3)], 1),
        flow(20, vec![OxmField::EthDst(mac(1), None)], 2),
        flow(0, vec![], 3),
    ]);
    let mut a = key();
    a.eth_dst = mac(1);
    let b = key();
    assert_eq!(lookups(&mut p, &[a, b], "linear"), [Some(2), Some(3)]);

    // Exact hash: 1000 MACs + table-miss.
    let mut flows: Vec<FlowMod> = (0..1000)
        .map(|i| flow(10, vec![OxmField::EthDst(mac(i), None)], i))
        .collect();
    flows.push(flow(0, vec![], 9999));
    let mut p = table(&flows);
    let keys: Vec<FlowKey> = (995..1005)
        .map(|i| {
            let mut k = key();
            k.eth_dst = mac(i);
            k
        })
        .collect();
    let found = lookups(&mut p, &keys, "hash");
    assert_eq!(found[0], Some(995));
    assert_eq!(found[9], Some(9999));

    // LPM: IPv4 /8../32 and IPv6 prefixes in two tables.
    let mut flows: Vec<FlowMod> = (0..200u32)
        .map(|i| {
            let len = 8 + i % 25;
            let addr = (0x0a00_0000 | i << 12) & (u32::MAX << (32 - len));
            flow(
                len as u16,
                vec![
                    OxmField::EthType(0x0800),
                    OxmField::Ipv4Dst(
                        Ipv4Addr::from(addr),
                        Some(Ipv4Addr::from(u32::MAX << (32 - len))),
                    ),
                ],
                u64::from(i),
            )
        })
        .collect();
    flows.push(flow(0, vec![], 9999));
    // A shape outside the form: looked up in the tuple space after the trie.
    flows.push(flow(300, vec![OxmField::InPort(5)], 7777));
    let mut p = table(&flows);
    let mut k = key();
    v4(&mut k, 1, 0x0a00_0001);
    let mut miss = key();
    v4(&mut miss, 1, 0x0b00_0001);
    let mut port5 = miss;
    port5.in_port = 5;
    let found = lookups(&mut p, &[k, miss, port5], "lpm");
    assert!(found[0].is_some_and(|c| c != 9999 && c != 7777));
    assert_eq!(found[1..], [Some(9999), Some(7777)]);
    let flows: Vec<FlowMod> = (0..100u32)
        .map(|i| {
            let len = 16 + i;
            let mask = u128::MAX << (128 - len);
            let addr = (0x2001_0db8u128 << 96) & mask;
            flow(
                len as u16,
                vec![
                    OxmField::EthType(0x86dd),
                    OxmField::Ipv6Dst(Ipv6Addr::from(addr), Some(Ipv6Addr::from(mask))),
                ],
                u64::from(i),
            )
        })
        .collect();
    let mut p = table(&flows);
    let mut k = key();
    k.eth_type = 0x86dd;
    k.present.insert(Field::Ipv6Dst);
    k.ipv6_dst = 0x2001_0db8u128 << 96;
    // The longest (/115, all zero past the /32) prefix wins.
    assert_eq!(lookups(&mut p, &[k], "lpm"), [Some(99)]);

    // Tuple space: src/dst prefixes of equal lengths with and without
    // tcp_dst (no two shapes differ in one prefix only: no LPM form).
    let mut flows = Vec::new();
    for i in 0..64u32 {
        let (ls, ld) = (8 * (1 + i % 4), 8 * (1 + i % 4));
        let mut m = vec![
            OxmField::EthType(0x0800),
            OxmField::Ipv4Src(
                Ipv4Addr::from(0x0a00_0000 & (u32::MAX << (32 - ls))),
                Some(Ipv4Addr::from(u32::MAX << (32 - ls))),
            ),
            OxmField::Ipv4Dst(
                Ipv4Addr::from((0x1400_0000 | i) & (u32::MAX << (32 - ld))),
                Some(Ipv4Addr::from(u32::MAX << (32 - ld))),
            ),
        ];
        if i >= 16 {
            m.push(OxmField::IpProto(6));
            m.push(OxmField::TcpDst(80));
        }
        flows.push(flow(100 + i as u16, m, u64::from(i)));
    }
    flows.push(flow(0, vec![], 9999));
    let mut p = table(&flows);
    let mut k = key();
    v4(&mut k, 0x0a00_0001, 0x1400_0001);
    let mut miss = key();
    v4(&mut miss, 0x0b00_0001, 0x1400_0001);
    let found = lookups(&mut p, &[k, miss], "tss");
    assert!(found[0].is_some_and(|c| c != 9999));
    assert_eq!(found[1], Some(9999));
}
