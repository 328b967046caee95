//! Flow tables and packet keys for the classifier benchmarks: each
//! workload is a `Pipeline` with one table, the structure it is expected
//! to use, and a ring of keys to look up. Deterministic (fixed seeds).

use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, FlowMod};
use ofp::oxm::{Match, OxmField};
use ofp::port::port_no;
use packet::{Field, FlowKey};
use pipeline::Pipeline;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Keys per workload (successive lookups hit different entries).
pub const RING: usize = 4096;

/// A tiny deterministic generator (xorshift64*), so runs are comparable.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub struct Workload {
    pub name: &'static str,
    pub pipeline: Pipeline,
    /// The structure the table must be using.
    pub kind: &'static str,
    pub keys: Vec<FlowKey>,
}

pub fn flow(priority: u16, fields: Vec<OxmField>, cookie: u64) -> FlowMod {
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
        instructions: vec![Instruction::ApplyActions(vec![
            ofp::action::Action::Output {
                port: port_no::CONTROLLER,
                max_len: 0,
            },
        ])],
    }
}

pub fn mac(i: u64) -> [u8; 6] {
    let b = (i | 0x0200_0000_0000).to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// `n` eth_dst-exact flows (priority 10) and a table-miss entry.
pub fn l2_flows(n: u64) -> Vec<FlowMod> {
    let mut v: Vec<FlowMod> = (0..n)
        .map(|i| flow(10, vec![OxmField::EthDst(mac(i), None)], i))
        .collect();
    v.push(flow(0, vec![], u64::MAX));
    v
}

/// 100K flows with random priorities over three shapes (eth_dst;
/// in_port + eth_dst; eth_type + ipv4_dst/24).
pub fn mixed_flows(n: u64) -> Vec<FlowMod> {
    let mut rng = Rng(7);
    (0..n)
        .map(|i| {
            let prio = rng.below(60_000) as u16;
            let m = match i % 3 {
                0 => vec![OxmField::EthDst(mac(i), None)],
                1 => vec![
                    OxmField::InPort(1 + i as u32 % 64),
                    OxmField::EthDst(mac(i), None),
                ],
                _ => vec![
                    OxmField::EthType(0x0800),
                    OxmField::Ipv4Dst(
                        Ipv4Addr::from(rng.next() as u32 & 0xffff_ff00),
                        Some(Ipv4Addr::new(255, 255, 255, 0)),
                    ),
                ],
            };
            flow(prio, m, i)
        })
        .collect()
}

pub fn install(flows: &[FlowMod]) -> Pipeline {
    let mut p = Pipeline::new(1);
    for f in flows {
        if let Err(e) = p.flow_mod(f, 0) {
            panic!("flow-mod refused: {e:?}");
        }
    }
    p
}

fn key() -> FlowKey {
    let mut k = FlowKey::new(1);
    k.present.insert(Field::EthDst);
    k.present.insert(Field::EthSrc);
    k.present.insert(Field::EthType);
    k
}

/// L2 MAC table: eth_dst exact x `n` + table-miss; keys hit random MACs.
pub fn l2(n: u64) -> Workload {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n);
    let keys = (0..RING)
        .map(|_| {
            let mut k = key();
            k.eth_dst = mac(rng.below(n));
            k
        })
        .collect();
    Workload {
        name: if n <= 100 {
            "l2_exact_100"
        } else {
            "l2_exact_100k"
        },
        pipeline: install(&l2_flows(n)),
        kind: "hash",
        keys,
    }
}

/// A handful of mixed shapes.
pub fn linear() -> Workload {
    let flows = vec![
        flow(30, vec![OxmField::InPort(3)], 1),
        flow(20, vec![OxmField::EthDst(mac(1), None)], 2),
        flow(
            20,
            vec![OxmField::EthType(0x0800), OxmField::IpProto(17)],
            3,
        ),
        flow(10, vec![OxmField::EthType(0x0806)], 4),
        flow(0, vec![], 5),
    ];
    let keys = (0..RING)
        .map(|i| {
            let mut k = key();
            k.eth_type = if i % 2 == 0 { 0x0806 } else { 0x0800 };
            k.eth_dst = mac(i as u64 % 3);
            k
        })
        .collect();
    Workload {
        name: "linear_5",
        pipeline: install(&flows),
        kind: "linear",
        keys,
    }
}

/// Routing table: 10K IPv4 prefixes /8../32 (mostly /24), priority =
/// prefix length, and a default route; keys fall in random prefixes.
/// With `extra`, four rules of other shapes above the routes (ARP, an
/// in_port, a UDP port, an eth_src) that traffic misses: the trie plus
/// four subtable probes.
pub fn lpm_v4(extra: bool) -> Workload {
    let mut rng = Rng(11);
    let mut flows = Vec::new();
    let mut prefixes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    while prefixes.len() < 10_000 {
        let len = match rng.below(100) {
            0..=4 => 8 + rng.below(8) as u32,
            5..=24 => 16 + rng.below(8) as u32,
            25..=89 => 24,
            _ => 25 + rng.below(8) as u32,
        };
        let addr = (rng.next() as u32) & (u32::MAX << (32 - len));
        if !seen.insert((addr, len)) {
            continue;
        }
        prefixes.push((addr, len));
        flows.push(flow(
            len as u16,
            vec![
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(
                    Ipv4Addr::from(addr),
                    Some(Ipv4Addr::from(u32::MAX << (32 - len))),
                ),
            ],
            prefixes.len() as u64,
        ));
    }
    flows.push(flow(0, vec![OxmField::EthType(0x0800)], 0));
    if extra {
        flows.push(flow(500, vec![OxmField::EthType(0x0806)], 1_000_001));
        flows.push(flow(500, vec![OxmField::InPort(7)], 1_000_002));
        flows.push(flow(
            500,
            vec![
                OxmField::EthType(0x0800),
                OxmField::IpProto(17),
                OxmField::UdpDst(53),
            ],
            1_000_003,
        ));
        flows.push(flow(500, vec![OxmField::EthSrc(mac(9), None)], 1_000_004));
    }
    let keys = (0..RING)
        .map(|_| {
            let (addr, len) = prefixes[rng.below(prefixes.len() as u64) as usize];
            let host = if len == 32 {
                0
            } else {
                (rng.next() as u32) & (u32::MAX >> len)
            };
            let mut k = key();
            k.eth_type = 0x0800;
            k.present.insert(Field::Ipv4Dst);
            k.ipv4_dst = addr | host;
            k
        })
        .collect();
    Workload {
        name: if extra {
            "lpm_ipv4_10k_plus_4_shapes"
        } else {
            "lpm_ipv4_10k"
        },
        pipeline: install(&flows),
        kind: "lpm",
        keys,
    }
}

/// IPv6 routing table: 10K prefixes /16../64 and 10% /128.
pub fn lpm_v6() -> Workload {
    let mut rng = Rng(13);
    let mut flows = Vec::new();
    let mut v6 = Vec::new();
    for i in 0..10_000u64 {
        let len = if i % 10 == 0 {
            128
        } else {
            16 + rng.below(49) as u32
        };
        let mask = u128::MAX << (128 - len);
        let addr = ((u128::from(rng.next()) << 64) | u128::from(rng.next())) & mask;
        v6.push((addr, len));
        flows.push(flow(
            len as u16,
            vec![
                OxmField::EthType(0x86dd),
                OxmField::Ipv6Dst(Ipv6Addr::from(addr), Some(Ipv6Addr::from(mask))),
            ],
            i,
        ));
    }
    flows.push(flow(0, vec![OxmField::EthType(0x86dd)], 0));
    let keys = (0..RING)
        .map(|_| {
            let (addr, len) = v6[rng.below(v6.len() as u64) as usize];
            let host = if len == 128 {
                0
            } else {
                u128::from(rng.next()) & (u128::MAX >> len)
            };
            let mut k = key();
            k.eth_type = 0x86dd;
            k.present.insert(Field::Ipv6Dst);
            k.ipv6_dst = addr | host;
            k
        })
        .collect();
    Workload {
        name: "lpm_ipv6_10k",
        pipeline: install(&flows),
        kind: "lpm",
        keys,
    }
}

/// An ACL-like table: 10K rules with random priorities over 32 shapes
/// (an ipv4_src mask x an ipv4_dst mask, with or without ip_proto +
/// tcp_dst) and a table-miss entry. The masks are non-contiguous (e.g.
/// `255.0.255.0`) so that no LPM form exists: a pure tuple space.
///
/// Two key rings: packets that hit a rule, and random packets that miss
/// every rule but the table-miss (the worst case: every subtable probed).
pub fn tss() -> (Workload, Workload) {
    let mut rng = Rng(17);
    let masks: [u32; 4] = [0xff00_ff00, 0xf0f0_f0f0, 0xffff_0f00, 0x0fff_ff0f];
    let mut flows = Vec::new();
    let mut rules = Vec::new();
    for i in 0..10_000u64 {
        let (ms, md) = (masks[rng.below(4) as usize], masks[rng.below(4) as usize]);
        let l4 = rng.below(2) == 0;
        let src = (rng.next() as u32) & ms;
        let dst = (rng.next() as u32) & md;
        let port = 1 + rng.below(1024) as u16;
        let mut m = vec![
            OxmField::EthType(0x0800),
            OxmField::Ipv4Src(Ipv4Addr::from(src), Some(Ipv4Addr::from(ms))),
            OxmField::Ipv4Dst(Ipv4Addr::from(dst), Some(Ipv4Addr::from(md))),
        ];
        if l4 {
            m.push(OxmField::IpProto(6));
            m.push(OxmField::TcpDst(port));
        }
        rules.push((src, ms, dst, md, l4.then_some(port)));
        flows.push(flow(1 + rng.below(1000) as u16, m, i));
    }
    flows.push(flow(0, vec![], 0));
    let p = install(&flows);
    let tcp_key = |src: u32, dst: u32, port: u16| {
        let mut k = key();
        k.eth_type = 0x0800;
        for f in [
            Field::Ipv4Src,
            Field::Ipv4Dst,
            Field::IpProto,
            Field::TcpSrc,
            Field::TcpDst,
        ] {
            k.present.insert(f);
        }
        k.ipv4_src = src;
        k.ipv4_dst = dst;
        k.ip_proto = 6;
        k.tp_dst = port;
        k
    };
    let hit = (0..RING)
        .map(|_| {
            let (src, ms, dst, md, port) = rules[rng.below(rules.len() as u64) as usize];
            tcp_key(
                src | (rng.next() as u32 & !ms),
                dst | (rng.next() as u32 & !md),
                port.unwrap_or(80),
            )
        })
        .collect();
    let miss = (0..RING)
        .map(|_| tcp_key(rng.next() as u32, rng.next() as u32, 2000))
        .collect();
    (
        Workload {
            name: "tss_32_shapes_10k_hit",
            pipeline: p.clone(),
            kind: "tss",
            keys: hit,
        },
        Workload {
            name: "tss_32_shapes_10k_miss",
            pipeline: p,
            kind: "tss",
            keys: miss,
        },
    )
}

/// Every lookup workload.
pub fn all() -> Vec<Workload> {
    let (hit, miss) = tss();
    vec![
        l2(100),
        l2(100_000),
        linear(),
        lpm_v4(false),
        lpm_v4(true),
        lpm_v6(),
        hit,
        miss,
    ]
}
