//! The HARMLESS workloads: flow sets and the traffic that exercises them.
//!
//! A [`Workload`] is plain data any OpenFlow 1.3 switch can take: the
//! group-mods and flow-mods to install (from the `ofp` crate, so the same
//! messages go to oxflow, Open vSwitch or an external switch, or straight
//! into a [`pipeline::Pipeline`]) and a set of 60-byte frames (64 bytes on
//! the wire with the FCS) that together hit every forwarding entry. Every
//! frame enters on [`Ports::input`] and, if the switch is right, leaves on
//! [`Ports::output`]; nothing goes to the controller and there are no
//! table-miss entries (a miss is a drop, as OpenFlow 1.3 specifies).
//!
//! The pipelines follow the four use cases of the HARMLESS paper (after
//! ESwitch's evaluation): an L2 MAC table, L3 routing, a load balancer with
//! an ACL in front, and a telco access gateway. The exact rule sets below are
//! our own equivalents:
//!
//! - `single`: one entry `in_port=1 -> output:2`; one frame. `size` is
//!   ignored (always 1 entry).
//! - `l2`: table 0 holds `size` entries `eth_dst=02:00:xx:xx:xx:xx ->
//!   output:2` (exact match on one field: the hash-table case). One frame
//!   per entry.
//! - `l3`: table 0 `in_port=1 -> goto 1`; table 1 holds `size` disjoint IPv4
//!   prefixes of lengths /16../32 (mostly /24, as in Internet tables;
//!   priority = prefix length) `-> group (i mod 10)+1`; the 10 next-hop
//!   groups are INDIRECT with `dec_nw_ttl, set eth_src, set eth_dst,
//!   output:2`. One frame per prefix, to an address inside it.
//! - `lb_acl`: table 0 is an ACL of `size` rules: three quarters *allow*
//!   rules `tcp, ip_src=<block>/16..28, ip_dst=<VIP> -> goto 1` (priority
//!   100) and one quarter *deny* rules `tcp, ip_src=<host>/32, ip_dst=<VIP>,
//!   tcp_dst=22 -> drop` (priority 200), each deny inside an allow block;
//!   table 1 is the load balancer: per VIP (10 of them, 172.16.0.1-10)
//!   `ip_dst=<VIP> -> group 100+v`, a SELECT group of 8 backends each
//!   rewriting `ip_dst` and `eth_dst` then `output:2`. One TCP frame per
//!   allow rule (source port varied so the select hash spreads).
//! - `gateway`: 10 customer edges (CE), each a VLAN (vid 100..109) on the
//!   input port. Table 0 `in_port=1, vlan_vid=<CE> -> pop_vlan, goto
//!   1+c`; tables 1..=10 are the per-CE NAT tables, `size` entries in all,
//!   `udp, ip_src=<private user address> -> set ip_src=<public>,
//!   set udp_src=<port>, goto 20` (private addresses overlap across CEs,
//!   which is why each CE has its own table); table 20 routes with 10,000
//!   prefixes as in `l3` `-> next-hop group`. `max(size, 10,000)` frames so
//!   every user and every route is hit.
//! - `acl_l3`: an ACL in front of `l3`'s routing. Table 0 holds `size`
//!   rules on the IPv4 source: three quarters *allow* `ip, ip_src=<block>
//!   /22..28 -> goto 1` (priority 100) and one quarter *watch* `ip,
//!   ip_src=<host>/32 -> output:CONTROLLER` (priority 200, a host inside
//!   an allow block whose traffic the controller inspects); table 1 routes
//!   `size` prefixes as `l3` does. One frame per route, from a host of an
//!   allow block (never a watched one).
//!
//! Traffic modes ([`Traffic`]):
//! - `spread`: the frames above, one per entry, sent round-robin.
//! - `tse` (tuple space explosion, after Csikor et al., CoNEXT 2019):
//!   frames that still hit the same allow/forward entries but are crafted so
//!   a megaflow cache (Open vSwitch) must un-wildcard a different number of
//!   bits for each: in `lb_acl` the source address differs from a deny
//!   rule's host at bit k (inside the allow block) and the TCP destination
//!   port differs from 22 at bit j, so each (k, j) pair gives a megaflow with
//!   a distinct mask (up to 17 x 17 per allow prefix length). In `l3` and
//!   `gateway` the destination varies each host bit of the matched prefix.
//!   In `single` and `l2` (exact matches only) no distinct masks can be
//!   forced; their tse frames vary the fields no rule looks at.

use ofp::action::Action;
use ofp::error::ErrorCode;
use ofp::group::{command as gcmd, group_type, Bucket, GroupMod};
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command, FlowMod, Message, NO_BUFFER};
use ofp::oxm::{vid, Match, OxmField};
use ofp::port::port_no;
use std::fmt;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::path::Path;
use std::str::FromStr;

/// The sizes the HARMLESS evaluation uses (entries in the workload's main
/// table).
pub const SIZES: [usize; 4] = [100, 1_000, 10_000, 100_000];

/// Length of every generated frame without the FCS (64 bytes on the wire).
pub const FRAME_LEN: usize = 60;

/// Number of next-hop groups in `l3` and `gateway`.
pub const NEXT_HOPS: u32 = 10;

/// Number of customer edges (VLANs, NAT tables) in `gateway`.
pub const CES: u32 = 10;

/// Size of the `gateway` routing table.
pub const GATEWAY_ROUTES: usize = 10_000;

/// Number of virtual IPs and backends per VIP in `lb_acl`.
pub const VIPS: u32 = 10;
pub const BACKENDS: u32 = 8;

/// First table id of the gateway's NAT tables and its routing table.
const GW_NAT_TABLE: u8 = 1;
const GW_ROUTE_TABLE: u8 = 20;

/// Source MAC of generated frames and the MAC the next-hop groups put as
/// source (the "router").
pub const HOST_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
pub const ROUTER_MAC: [u8; 6] = [0x02, 0xfe, 0x00, 0x00, 0x00, 0x01];

/// Which pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Single,
    L2,
    L3,
    LbAcl,
    Gateway,
    AclL3,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Single,
        Kind::L2,
        Kind::L3,
        Kind::LbAcl,
        Kind::Gateway,
        Kind::AclL3,
    ];
    /// The four HARMLESS workloads (everything but `single`).
    pub const HARMLESS: [Kind; 4] = [Kind::L2, Kind::L3, Kind::LbAcl, Kind::Gateway];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Single => "single",
            Kind::L2 => "l2",
            Kind::L3 => "l3",
            Kind::LbAcl => "lb_acl",
            Kind::Gateway => "gateway",
            Kind::AclL3 => "acl_l3",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Kind, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown workload \"{s}\" (single, l2, l3, lb_acl, gateway, acl_l3)")
            })
    }
}

/// How the frames are chosen; see the module comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Traffic {
    Spread,
    Tse,
}

impl Traffic {
    pub fn name(self) -> &'static str {
        match self {
            Traffic::Spread => "spread",
            Traffic::Tse => "tse",
        }
    }
}

impl FromStr for Traffic {
    type Err = String;
    fn from_str(s: &str) -> Result<Traffic, String> {
        match s {
            "spread" => Ok(Traffic::Spread),
            "tse" => Ok(Traffic::Tse),
            _ => Err(format!("unknown traffic mode \"{s}\" (spread, tse)")),
        }
    }
}

/// The switch ports the workload uses (OpenFlow port numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Ports {
    /// Where the generator's frames come in.
    pub input: u32,
    /// Where every forwarded frame goes out (the sink).
    pub output: u32,
}

impl Default for Ports {
    fn default() -> Self {
        Ports {
            input: 1,
            output: 2,
        }
    }
}

/// One workload at one size: what to install and what to send.
#[derive(Debug, Clone)]
pub struct Workload {
    pub kind: Kind,
    /// Entries in the main table (as asked; `single` has 1).
    pub size: usize,
    pub traffic: Traffic,
    pub ports: Ports,
    /// Installed first (flows refer to them).
    pub group_mods: Vec<GroupMod>,
    pub flow_mods: Vec<FlowMod>,
    /// [`FRAME_LEN`]-byte frames; together they hit every forwarding entry.
    pub frames: Vec<Vec<u8>>,
}

impl Workload {
    /// The workload `kind` with `size` entries and the default ports (1 in,
    /// 2 out).
    pub fn new(kind: Kind, size: usize, traffic: Traffic) -> Workload {
        Workload::with_ports(kind, size, traffic, Ports::default())
    }

    pub fn with_ports(kind: Kind, size: usize, traffic: Traffic, ports: Ports) -> Workload {
        let size = size.max(1);
        let mut w = Workload {
            kind,
            size: if kind == Kind::Single { 1 } else { size },
            traffic,
            ports,
            group_mods: Vec::new(),
            flow_mods: Vec::new(),
            frames: Vec::new(),
        };
        match kind {
            Kind::Single => build_single(&mut w),
            Kind::L2 => build_l2(&mut w),
            Kind::L3 => build_l3(&mut w),
            Kind::LbAcl => build_lb_acl(&mut w),
            Kind::Gateway => build_gateway(&mut w),
            Kind::AclL3 => build_acl_l3(&mut w),
        }
        w
    }

    /// "kind/size" or "kind/size/tse".
    pub fn name(&self) -> String {
        match self.traffic {
            Traffic::Spread => format!("{}/{}", self.kind, self.size),
            Traffic::Tse => format!("{}/{}/tse", self.kind, self.size),
        }
    }

    /// The OpenFlow messages to send, in order: group-mods, then flow-mods.
    /// (Follow them with a barrier request.)
    pub fn messages(&self) -> impl Iterator<Item = Message> + '_ {
        let groups = self.group_mods.iter().cloned().map(Message::GroupMod);
        let flows = self.flow_mods.iter().cloned().map(Message::FlowMod);
        groups.chain(flows)
    }

    /// Number of flow entries installed (all tables).
    pub fn n_flows(&self) -> usize {
        self.flow_mods.len()
    }

    /// Installs the workload into `p`, adding the two ports if missing.
    /// The error names the message (index into [`Workload::messages`]).
    pub fn install(&self, p: &mut pipeline::Pipeline) -> Result<(), (usize, ErrorCode)> {
        for port in [self.ports.input, self.ports.output] {
            if !p.ports.contains(port) {
                p.ports.insert(port, pipeline::PortInfo::up());
            }
        }
        for (i, gm) in self.group_mods.iter().enumerate() {
            p.group_mod(gm, 0).map_err(|e| (i, e))?;
        }
        let n = self.group_mods.len();
        for (i, fm) in self.flow_mods.iter().enumerate() {
            p.flow_mod(fm, 0).map_err(|e| (n + i, e))?;
        }
        Ok(())
    }

    /// Writes the frames as a libpcap file (Ethernet link type, 1 µs
    /// apart), for `netsniff-ng --in`/tcpreplay or Wireshark.
    pub fn write_pcap(&self, path: &Path) -> io::Result<()> {
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        write_pcap(&mut out, &self.frames)?;
        out.flush()
    }

    /// Writes the frames as a `trafgen` configuration (one `{ bytes }`
    /// block per frame; trafgen sends them round-robin).
    pub fn write_trafgen(&self, path: &Path) -> io::Result<()> {
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        write_trafgen(&mut out, &self.frames)?;
        out.flush()
    }
}

/// libpcap file: global header then one record per frame.
pub fn write_pcap(out: &mut impl Write, frames: &[Vec<u8>]) -> io::Result<()> {
    out.write_all(&0xa1b2_c3d4u32.to_le_bytes())?; // magic, µs timestamps
    out.write_all(&2u16.to_le_bytes())?; // version 2.4
    out.write_all(&4u16.to_le_bytes())?;
    out.write_all(&0i32.to_le_bytes())?; // thiszone
    out.write_all(&0u32.to_le_bytes())?; // sigfigs
    out.write_all(&65_535u32.to_le_bytes())?; // snaplen
    out.write_all(&1u32.to_le_bytes())?; // LINKTYPE_ETHERNET
    for (i, f) in frames.iter().enumerate() {
        let len = u32::try_from(f.len()).map_err(|_| io::ErrorKind::InvalidInput)?;
        out.write_all(&((i / 1_000_000) as u32).to_le_bytes())?;
        out.write_all(&((i % 1_000_000) as u32).to_le_bytes())?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(f)?;
    }
    Ok(())
}

/// trafgen configuration: `{ 0x.., ... }` per frame.
pub fn write_trafgen(out: &mut impl Write, frames: &[Vec<u8>]) -> io::Result<()> {
    writeln!(
        out,
        "/* {} frames generated by oxflow bench */",
        frames.len()
    )?;
    for f in frames {
        out.write_all(b"{ ")?;
        for (i, b) in f.iter().enumerate() {
            if i > 0 {
                out.write_all(b", ")?;
            }
            write!(out, "{b:#04x}")?;
        }
        out.write_all(b" }\n")?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Frames

/// The header fields of a generated frame (Ethernet [+ 802.1Q] + IPv4 +
/// UDP/TCP, padded to [`FRAME_LEN`]).
#[derive(Debug, Clone, Copy)]
struct Frame {
    eth_dst: [u8; 6],
    eth_src: [u8; 6],
    vlan: Option<u16>,
    ip_src: u32,
    ip_dst: u32,
    /// 6 (TCP) or 17 (UDP).
    proto: u8,
    sport: u16,
    dport: u16,
}

impl Frame {
    fn udp(ip_src: u32, ip_dst: u32, sport: u16, dport: u16) -> Frame {
        Frame {
            eth_dst: ROUTER_MAC,
            eth_src: HOST_MAC,
            vlan: None,
            ip_src,
            ip_dst,
            proto: 17,
            sport,
            dport,
        }
    }

    fn build(&self) -> Vec<u8> {
        let mut f = Vec::with_capacity(FRAME_LEN);
        f.extend_from_slice(&self.eth_dst);
        f.extend_from_slice(&self.eth_src);
        if let Some(v) = self.vlan {
            f.extend_from_slice(&0x8100u16.to_be_bytes());
            f.extend_from_slice(&(v & 0x0fff).to_be_bytes());
        }
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        let ip = f.len();
        let l4_len: usize = if self.proto == 6 { 20 } else { 8 };
        // The payload fills the frame to FRAME_LEN.
        let payload = FRAME_LEN.saturating_sub(ip + 20 + l4_len);
        let total = (20 + l4_len + payload) as u16;
        f.extend_from_slice(&[0x45, 0x00]);
        f.extend_from_slice(&total.to_be_bytes());
        f.extend_from_slice(&[0x00, 0x01, 0x40, 0x00, 64, self.proto, 0, 0]);
        f.extend_from_slice(&self.ip_src.to_be_bytes());
        f.extend_from_slice(&self.ip_dst.to_be_bytes());
        let ck = packet::checksum::checksum(0, &f[ip..ip + 20]);
        f[ip + 10..ip + 12].copy_from_slice(&ck.to_be_bytes());
        let l4 = f.len();
        f.extend_from_slice(&self.sport.to_be_bytes());
        f.extend_from_slice(&self.dport.to_be_bytes());
        if self.proto == 6 {
            // seq, ack, data offset 5, flags ACK, window, checksum, urgent
            f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
        } else {
            f.extend_from_slice(&((8 + payload) as u16).to_be_bytes());
            f.extend_from_slice(&[0, 0]);
        }
        f.resize(l4 + l4_len + payload, 0);
        let pseudo = packet::checksum::pseudo_v4(
            &self.ip_src.to_be_bytes(),
            &self.ip_dst.to_be_bytes(),
            self.proto,
            l4_len + payload,
        );
        let ck = packet::checksum::checksum(pseudo, &f[l4..]);
        let at = if self.proto == 6 { l4 + 16 } else { l4 + 6 };
        f[at..at + 2].copy_from_slice(&ck.to_be_bytes());
        f
    }
}

/// `02:00:` followed by the 32 bits of `i`: a locally administered
/// unicast MAC per L2 entry.
fn entry_mac(prefix: u8, i: u32) -> [u8; 6] {
    let b = i.to_be_bytes();
    [0x02, prefix, b[0], b[1], b[2], b[3]]
}

/// Spreads `i` over the bit positions 0..n (n > 0): which bit a tse frame
/// flips.
fn tse_bit(i: usize, n: u32) -> u32 {
    (i % n.max(1) as usize) as u32
}

// ---------------------------------------------------------------------------
// Prefix sets

/// Disjoint IPv4 prefixes `(address, length)`, lengths from `pattern` in
/// turn, laid out upwards from `base` (each aligned to its own size, so no
/// prefix contains another: the LPM answer for an address inside prefix i
/// is prefix i).
fn disjoint_prefixes(n: usize, base: u32, pattern: &[u8]) -> Vec<(u32, u8)> {
    let mut out = Vec::with_capacity(n);
    let mut cursor = u64::from(base);
    for i in 0..n {
        let len = pattern[i % pattern.len()];
        let size = 1u64 << (32 - u32::from(len));
        cursor = cursor.div_ceil(size) * size;
        out.push((cursor as u32, len));
        cursor += size;
    }
    out
}

/// Route lengths, mostly /24 like an Internet table.
const ROUTE_LENGTHS: [u8; 12] = [24, 24, 22, 24, 20, 24, 28, 24, 16, 24, 32, 23];
/// Routes start at 16.0.0.0; 100K of them end below 64.0.0.0.
const ROUTE_BASE: u32 = 0x1000_0000;

/// ACL allow-block lengths.
const ACL_LENGTHS: [u8; 4] = [24, 26, 28, 22];
/// ACL sources start at 64.0.0.0.
const ACL_BASE: u32 = 0x4000_0000;

fn routes(n: usize) -> Vec<(u32, u8)> {
    disjoint_prefixes(n, ROUTE_BASE, &ROUTE_LENGTHS)
}

fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

/// An address inside `(p, len)`: host part 1 (the address itself for /32,
/// /31), or for tse the host part with bit `k` set.
fn host_in(p: u32, len: u8, traffic: Traffic, i: usize) -> u32 {
    let host_bits = 32 - u32::from(len);
    match traffic {
        _ if host_bits == 0 => p,
        Traffic::Spread => p | 1,
        Traffic::Tse => p | (1 << tse_bit(i, host_bits)),
    }
}

// ---------------------------------------------------------------------------
// Flow-mod helpers

fn flow(table_id: u8, priority: u16, m: Vec<OxmField>, insts: Vec<Instruction>) -> FlowMod {
    FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id,
        command: flow_mod_command::ADD,
        idle_timeout: 0,
        hard_timeout: 0,
        priority,
        buffer_id: NO_BUFFER,
        out_port: port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: Match::new(m),
        instructions: insts,
    }
}

fn ipv4(a: u32) -> Ipv4Addr {
    Ipv4Addr::from(a)
}

fn prefix_field_dst(p: u32, len: u8) -> OxmField {
    if len == 32 {
        OxmField::Ipv4Dst(ipv4(p), None)
    } else {
        OxmField::Ipv4Dst(ipv4(p), Some(ipv4(mask(len))))
    }
}

fn output(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

/// The 10 next-hop groups (ids 1..=10): dec TTL, MAC rewrite, output.
fn next_hop_groups(out: u32) -> Vec<GroupMod> {
    (1..=NEXT_HOPS)
        .map(|g| GroupMod {
            command: gcmd::ADD,
            group_type: group_type::INDIRECT,
            group_id: g,
            buckets: vec![Bucket {
                weight: 0,
                watch_port: port_no::ANY,
                watch_group: ofp::group::group_id::ANY,
                actions: vec![
                    Action::DecNwTtl,
                    Action::SetField(OxmField::EthSrc(ROUTER_MAC, None)),
                    Action::SetField(OxmField::EthDst(entry_mac(0xaa, g), None)),
                    output(out),
                ],
            }],
        })
        .collect()
}

/// A routing table: `routes` in `table` -> next-hop group (i mod 10)+1.
fn route_flows(table: u8, routes: &[(u32, u8)]) -> impl Iterator<Item = FlowMod> + '_ {
    routes.iter().enumerate().map(move |(i, &(p, len))| {
        flow(
            table,
            u16::from(len),
            vec![OxmField::EthType(0x0800), prefix_field_dst(p, len)],
            vec![Instruction::ApplyActions(vec![Action::Group(
                (i as u32 % NEXT_HOPS) + 1,
            )])],
        )
    })
}

// ---------------------------------------------------------------------------
// The workloads

fn build_single(w: &mut Workload) {
    w.flow_mods.push(flow(
        0,
        1,
        vec![OxmField::InPort(w.ports.input)],
        vec![Instruction::ApplyActions(vec![output(w.ports.output)])],
    ));
    let (src, dst) = (0x0a00_0001, 0x0a00_0002);
    w.frames = match w.traffic {
        Traffic::Spread => vec![Frame::udp(src, dst, 1000, 2000).build()],
        // Nothing to explode: vary the fields no rule reads, bit by bit.
        Traffic::Tse => (0..32)
            .map(|k| Frame::udp(src ^ (1 << k), dst, 1000 ^ (1 << (k % 16)), 2000).build())
            .collect(),
    };
}

fn build_l2(w: &mut Workload) {
    for i in 0..w.size as u32 {
        w.flow_mods.push(flow(
            0,
            100,
            vec![OxmField::EthDst(entry_mac(0x00, i), None)],
            vec![Instruction::ApplyActions(vec![output(w.ports.output)])],
        ));
        let mut f = Frame::udp(0x0a00_0001, 0x0a00_0002, 1000, 2000);
        f.eth_dst = entry_mac(0x00, i);
        if w.traffic == Traffic::Tse {
            let k = tse_bit(i as usize, 32);
            f.ip_src ^= 1 << k;
            f.eth_src[5] ^= 1 << (k % 8);
        }
        w.frames.push(f.build());
    }
}

fn build_l3(w: &mut Workload) {
    w.group_mods = next_hop_groups(w.ports.output);
    w.flow_mods.push(flow(
        0,
        100,
        vec![OxmField::InPort(w.ports.input)],
        vec![Instruction::GotoTable(1)],
    ));
    let rs = routes(w.size);
    w.flow_mods.extend(route_flows(1, &rs));
    w.frames = rs
        .iter()
        .enumerate()
        .map(|(i, &(p, len))| {
            let dst = host_in(p, len, w.traffic, i);
            Frame::udp(0x0a00_0001, dst, 1000 + (i % 50_000) as u16, 53).build()
        })
        .collect();
}

/// VIP v (0-based): 172.16.0.(v+1).
fn vip(v: u32) -> u32 {
    0xac10_0001 + v
}

fn build_lb_acl(w: &mut Workload) {
    const ALLOW_PRIO: u16 = 100;
    const DENY_PRIO: u16 = 200;
    const DENIED_PORT: u16 = 22;
    let n_deny = w.size / 4;
    let n_allow = w.size - n_deny;
    let blocks = disjoint_prefixes(n_allow, ACL_BASE, &ACL_LENGTHS);
    // The host each deny rule blocks: inside allow block j, host part 13
    // (every block has at least 16 addresses), never the spread traffic's
    // host 1.
    let deny_host = |j: usize| blocks[j].0 + 13;
    for (i, &(p, len)) in blocks.iter().enumerate() {
        w.flow_mods.push(flow(
            0,
            ALLOW_PRIO,
            vec![
                OxmField::EthType(0x0800),
                OxmField::IpProto(6),
                OxmField::Ipv4Src(ipv4(p), Some(ipv4(mask(len)))),
                OxmField::Ipv4Dst(ipv4(vip(i as u32 % VIPS)), None),
            ],
            vec![Instruction::GotoTable(1)],
        ));
    }
    for j in 0..n_deny {
        w.flow_mods.push(flow(
            0,
            DENY_PRIO,
            vec![
                OxmField::EthType(0x0800),
                OxmField::IpProto(6),
                OxmField::Ipv4Src(ipv4(deny_host(j)), None),
                OxmField::Ipv4Dst(ipv4(vip(j as u32 % VIPS)), None),
                OxmField::TcpDst(DENIED_PORT),
            ],
            vec![],
        ));
    }
    for v in 0..VIPS {
        let group = 100 + v;
        w.group_mods.push(GroupMod {
            command: gcmd::ADD,
            group_type: group_type::SELECT,
            group_id: group,
            buckets: (0..BACKENDS)
                .map(|b| Bucket {
                    weight: 1,
                    watch_port: port_no::ANY,
                    watch_group: ofp::group::group_id::ANY,
                    actions: vec![
                        Action::SetField(OxmField::Ipv4Dst(
                            ipv4(0x0ac8_0000 | (v << 8) | (b + 1)),
                            None,
                        )),
                        Action::SetField(OxmField::EthDst(entry_mac(0xbe, (v << 8) | b), None)),
                        output(w.ports.output),
                    ],
                })
                .collect(),
        });
        w.flow_mods.push(flow(
            1,
            100,
            vec![
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(ipv4(vip(v)), None),
            ],
            vec![Instruction::ApplyActions(vec![Action::Group(group)])],
        ));
    }
    let tcp = |src: u32, v: u32, sport: u16, dport: u16| {
        let mut f = Frame::udp(src, vip(v), sport, dport);
        f.proto = 6;
        f.build()
    };
    w.frames = match w.traffic {
        Traffic::Spread => blocks
            .iter()
            .enumerate()
            .map(|(i, &(p, _))| tcp(p | 1, i as u32 % VIPS, 1024 + (i % 60_000) as u16, 80))
            .collect(),
        // One frame per allow rule as in spread, but aimed next to a deny
        // rule: the source differs from the denied host at bit k (inside
        // the block) and the port differs from 22 at bit j. Blocks without
        // a deny rule (size < 4) get the same treatment around host 13.
        Traffic::Tse => (0..n_allow)
            .map(|i| {
                let j = if n_deny > 0 { i % n_deny } else { i };
                let host_bits = 32 - u32::from(blocks[j].1);
                // 17 x 17 (k, j) combinations: k = host_bits means "no
                // address bit flipped", and the port always differs.
                let k = (i / 17) as u32 % (host_bits + 1);
                let pb = (i % 16) as u32;
                let src = if k == host_bits {
                    deny_host(j)
                } else {
                    deny_host(j) ^ (1 << k)
                };
                let sport = 1024 + (i % 60_000) as u16;
                tcp(src, j as u32 % VIPS, sport, DENIED_PORT ^ (1 << pb))
            })
            .collect(),
    };
}

fn build_gateway(w: &mut Workload) {
    w.group_mods = next_hop_groups(w.ports.output);
    // Table 0: CE demultiplexing by VLAN.
    for c in 0..CES {
        w.flow_mods.push(flow(
            0,
            100,
            vec![
                OxmField::InPort(w.ports.input),
                OxmField::VlanVid(vid::PRESENT | (100 + c as u16), None),
            ],
            vec![
                Instruction::ApplyActions(vec![Action::PopVlan]),
                Instruction::GotoTable(GW_NAT_TABLE + c as u8),
            ],
        ));
    }
    // NAT: user u (global index) belongs to CE u mod 10 and has private
    // address 10.0.0.0 + u/10 (so the same private addresses recur in
    // every CE); it is translated to 198.18.0.0 + u/64, port 1024 + 4*(u mod 64)
    // + 1 (a port block per user).
    let user = |u: usize| (u as u32 % CES, 0x0a00_0000 + 1 + u as u32 / CES);
    for u in 0..w.size {
        let (c, private) = user(u);
        let public = 0xc612_0000 + u as u32 / 64;
        let port = 1024 + 4 * (u % 64) as u16 + 1;
        w.flow_mods.push(flow(
            GW_NAT_TABLE + c as u8,
            100,
            vec![
                OxmField::EthType(0x0800),
                OxmField::IpProto(17),
                OxmField::Ipv4Src(ipv4(private), None),
            ],
            vec![
                Instruction::ApplyActions(vec![
                    Action::SetField(OxmField::Ipv4Src(ipv4(public), None)),
                    Action::SetField(OxmField::UdpSrc(port)),
                ]),
                Instruction::GotoTable(GW_ROUTE_TABLE),
            ],
        ));
    }
    let rs = routes(GATEWAY_ROUTES);
    w.flow_mods.extend(route_flows(GW_ROUTE_TABLE, &rs));
    let n_frames = w.size.max(GATEWAY_ROUTES);
    w.frames = (0..n_frames)
        .map(|i| {
            let (c, private) = user(i % w.size);
            let (p, len) = rs[i % rs.len()];
            let dst = host_in(p, len, w.traffic, i / rs.len() + i);
            let mut f = Frame::udp(private, dst, 5000, 53);
            f.vlan = Some(100 + c as u16);
            f.build()
        })
        .collect();
}

fn build_acl_l3(w: &mut Workload) {
    const ALLOW_PRIO: u16 = 100;
    const WATCH_PRIO: u16 = 200;
    w.group_mods = next_hop_groups(w.ports.output);
    let n_watch = w.size / 4;
    let n_allow = (w.size - n_watch).max(1);
    let blocks = disjoint_prefixes(n_allow, ACL_BASE, &ACL_LENGTHS);
    for &(p, len) in &blocks {
        w.flow_mods.push(flow(
            0,
            ALLOW_PRIO,
            vec![
                OxmField::EthType(0x0800),
                OxmField::Ipv4Src(ipv4(p), Some(ipv4(mask(len)))),
            ],
            vec![Instruction::GotoTable(1)],
        ));
    }
    // The watched host of block j: host part 13, as `lb_acl`'s deny rules
    // (the traffic's sources are host 1).
    for j in 0..n_watch {
        w.flow_mods.push(flow(
            0,
            WATCH_PRIO,
            vec![
                OxmField::EthType(0x0800),
                OxmField::Ipv4Src(ipv4(blocks[j % n_allow].0 + 13), None),
            ],
            vec![Instruction::ApplyActions(vec![output(port_no::CONTROLLER)])],
        ));
    }
    let rs = routes(w.size);
    w.flow_mods.extend(route_flows(1, &rs));
    w.frames = rs
        .iter()
        .enumerate()
        .map(|(i, &(p, len))| {
            let src = blocks[i % n_allow].0 | 1;
            let dst = host_in(p, len, w.traffic, i);
            Frame::udp(src, dst, 1000 + (i % 50_000) as u16, 53).build()
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::{Output, PacketInEvent, Pipeline};

    /// Counts what the pipeline emits per frame.
    #[derive(Default)]
    struct Count {
        out: Vec<u32>,
        packet_ins: usize,
    }

    impl Output for Count {
        fn port(&mut self, port: u32, _data: &[u8], _queue: Option<u32>) {
            self.out.push(port);
        }
        fn packet_in(&mut self, _ev: PacketInEvent<'_>) {
            self.packet_ins += 1;
        }
    }

    /// Installs `w` and checks that every frame is forwarded out of the
    /// output port exactly once, that no entry of the main table is left
    /// unhit by `spread` traffic, and returns the pipeline.
    fn check(w: &Workload) -> Pipeline {
        let mut p = Pipeline::default();
        if let Err((i, e)) = w.install(&mut p) {
            panic!("{}: message {i} refused: {e:?}", w.name());
        }
        assert!(!w.frames.is_empty());
        let mut buf = packet::PacketBuf::new();
        for (i, f) in w.frames.iter().enumerate() {
            assert_eq!(f.len(), FRAME_LEN, "{} frame {i}", w.name());
            buf.set(f).expect("60 bytes fit");
            let mut c = Count::default();
            p.process(&mut buf, w.ports.input, 1, &mut c)
                .unwrap_or_else(|e| panic!("{} frame {i}: parse error {e:?}", w.name()));
            assert_eq!(c.packet_ins, 0, "{} frame {i}: packet-in", w.name());
            assert_eq!(c.out, vec![w.ports.output], "{} frame {i}", w.name());
        }
        p
    }

    /// Entries of `table` never hit, ignoring those traffic must not hit:
    /// with no instructions (`lb_acl`'s deny rules) or to the controller
    /// (`acl_l3`'s watch rules).
    fn unhit(p: &Pipeline, table: u8) -> usize {
        let watch = [Instruction::ApplyActions(vec![output(port_no::CONTROLLER)])];
        p.table(table)
            .expect("table exists")
            .entries()
            .filter(|e| e.packet_count() == 0)
            .filter(|e| !e.instructions.is_empty() && e.instructions[..] != watch[..])
            .count()
    }

    fn sizes() -> &'static [usize] {
        // The 100K size is checked by `every_workload_at_100k` (a test of
        // its own so the two run in parallel).
        &SIZES[..3]
    }

    #[test]
    fn frames_are_valid_ipv4_with_good_checksums() {
        for kind in Kind::ALL {
            for traffic in [Traffic::Spread, Traffic::Tse] {
                let w = Workload::new(kind, 100, traffic);
                for f in &w.frames {
                    let mut key = packet::FlowKey::new(1);
                    packet::parse(f, &mut key).expect("parses");
                    assert_eq!(key.eth_type, 0x0800);
                    let ip = &f[key.offsets.l3 as usize..];
                    assert_eq!(packet::checksum::checksum(0, &ip[..20]), 0);
                    let l4 = &f[key.offsets.l4 as usize..];
                    let pseudo =
                        packet::checksum::pseudo_v4(&ip[12..16], &ip[16..20], ip[9], l4.len());
                    assert_eq!(packet::checksum::checksum(pseudo, l4), 0, "{}", w.name());
                }
            }
        }
    }

    #[test]
    fn every_workload_at_every_size_forwards_every_frame() {
        for &size in sizes() {
            for kind in Kind::ALL {
                for traffic in [Traffic::Spread, Traffic::Tse] {
                    let w = Workload::new(kind, size, traffic);
                    let p = check(&w);
                    if traffic == Traffic::Spread {
                        // spread traffic hits every forwarding entry
                        for t in p.tables() {
                            assert_eq!(unhit(&p, t.id), 0, "{} table {}", w.name(), t.id);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_workload_at_100k() {
        for kind in Kind::HARMLESS {
            for traffic in [Traffic::Spread, Traffic::Tse] {
                check(&Workload::new(kind, 100_000, traffic));
            }
        }
    }

    #[test]
    fn sizes_are_what_they_say() {
        for &size in &SIZES {
            let l2 = Workload::new(Kind::L2, size, Traffic::Spread);
            assert_eq!(l2.n_flows(), size);
            assert_eq!(l2.frames.len(), size);
            let l3 = Workload::new(Kind::L3, size, Traffic::Spread);
            assert_eq!(l3.n_flows(), size + 1);
            assert_eq!(l3.group_mods.len(), 10);
            let acl = Workload::new(Kind::LbAcl, size, Traffic::Spread);
            assert_eq!(acl.n_flows(), size + VIPS as usize);
            assert_eq!(acl.frames.len(), size - size / 4);
            let gw = Workload::new(Kind::Gateway, size, Traffic::Spread);
            assert_eq!(gw.n_flows(), CES as usize + size + GATEWAY_ROUTES);
            assert_eq!(gw.frames.len(), size.max(GATEWAY_ROUTES));
        }
    }

    #[test]
    fn prefixes_are_disjoint_and_of_many_lengths() {
        let rs = routes(100_000);
        for pair in rs.windows(2) {
            let (a, la) = pair[0];
            let (b, _) = pair[1];
            let end = u64::from(a) + (1u64 << (32 - u32::from(la)));
            assert!(end <= u64::from(b), "{a:#x}/{la} overlaps {b:#x}");
            assert_eq!(a & !mask(la), 0, "unaligned");
        }
        let last = rs.last().expect("non-empty");
        assert!(last.0 < 0x7f00_0000, "routes run into 127/8");
        let lens: std::collections::BTreeSet<u8> = rs.iter().map(|r| r.1).collect();
        assert_eq!(lens.len(), 7);
    }

    #[test]
    fn tse_traffic_uses_many_distinct_masks() {
        // Count the distinct (source bit, port bit) pairs in which tse frames
        // differ from their nearest deny rule: each is one megaflow mask.
        let w = Workload::new(Kind::LbAcl, 1_000, Traffic::Tse);
        let denied: std::collections::HashSet<u32> = w
            .flow_mods
            .iter()
            .filter(|f| f.instructions.is_empty())
            .filter_map(|f| {
                f.match_.fields.iter().find_map(|m| match m {
                    OxmField::Ipv4Src(a, None) => Some(u32::from(*a)),
                    _ => None,
                })
            })
            .collect();
        assert_eq!(denied.len(), 250);
        let mut pairs = std::collections::BTreeSet::new();
        for f in &w.frames {
            let src = u32::from_be_bytes([f[26], f[27], f[28], f[29]]);
            let dport = u16::from_be_bytes([f[36], f[37]]);
            // the deny rule the frame was aimed next to, and at which bit
            let src_bit = if denied.contains(&src) {
                None
            } else {
                (0..32).find(|k| denied.contains(&(src ^ (1 << k))))
            };
            let port_bit = (dport ^ 22).checked_ilog2();
            assert!(port_bit.is_some(), "tse frames never use the denied port");
            pairs.insert((src_bit, port_bit));
        }
        assert!(pairs.len() >= 100, "only {} masks", pairs.len());
    }

    #[test]
    fn pcap_and_trafgen_files() {
        let w = Workload::new(Kind::L2, 100, Traffic::Spread);
        let mut pcap = Vec::new();
        write_pcap(&mut pcap, &w.frames).unwrap();
        assert_eq!(pcap.len(), 24 + 100 * (16 + FRAME_LEN));
        assert_eq!(&pcap[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        assert_eq!(&pcap[24 + 16..24 + 16 + FRAME_LEN], &w.frames[0][..]);
        let mut tg = Vec::new();
        write_trafgen(&mut tg, &w.frames).unwrap();
        let text = String::from_utf8(tg).unwrap();
        assert_eq!(text.lines().filter(|l| l.starts_with('{')).count(), 100);
        let first = text.lines().nth(1).unwrap();
        assert!(first.starts_with("{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00"));
        assert_eq!(first.matches("0x").count(), FRAME_LEN);
    }

    #[test]
    fn messages_encode_and_decode() {
        for kind in Kind::ALL {
            let w = Workload::new(kind, 100, Traffic::Spread);
            let msgs: Vec<Message> = w.messages().collect();
            assert_eq!(msgs.len(), w.group_mods.len() + w.flow_mods.len());
            for (i, m) in msgs.into_iter().enumerate() {
                let bytes = ofp::message::OfpMessage::new(i as u32, m.clone()).encode();
                let back = ofp::message::OfpMessage::decode(&bytes)
                    .unwrap_or_else(|e| panic!("{} message {i}: {e:?}", w.name()));
                assert_eq!(back.body, m);
            }
        }
    }
}
