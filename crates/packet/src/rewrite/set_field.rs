//! The set-field action: its value ([`SetField`]) and its general
//! implementation for every settable field ([`set_field_general`]), which
//! the fast paths (module `fast_path`) fall back to.

use super::checksums::{be16_at, be32_at, ip_ck, l4_ck, patch, sctp_fix};
use super::error::RewriteError;
use super::reparse::{ensure, reparse};
use crate::buf::PacketBuf;
use crate::field::{frag, Field};
use crate::key::{FlowKey, VID_PRESENT};
use crate::proto::{ethertype, ipproto};

/// A set-field action's value, one variant per settable field. Values are
/// host-order integers; VIDs may carry the 0x1000 present bit (ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetField {
    EthDst([u8; 6]),
    EthSrc([u8; 6]),
    /// The ethertype after the VLAN tags (`FlowKey::offsets.eth_type`);
    /// the key is parsed again, as the layers after it change meaning.
    EthType(u16),
    VlanVid(u16),
    VlanPcp(u8),
    IpDscp(u8),
    IpEcn(u8),
    /// The IPv4 protocol (header checksum updated) or the IPv6 next
    /// header that names the upper layer (the last one of the extension
    /// header chain); the L4 header is left as it is and the key is
    /// parsed again.
    IpProto(u8),
    Ipv4Src(u32),
    Ipv4Dst(u32),
    TcpSrc(u16),
    TcpDst(u16),
    UdpSrc(u16),
    UdpDst(u16),
    SctpSrc(u16),
    SctpDst(u16),
    Icmpv4Type(u8),
    Icmpv4Code(u8),
    ArpOp(u16),
    ArpSpa(u32),
    ArpTpa(u32),
    ArpSha([u8; 6]),
    ArpTha([u8; 6]),
    Ipv6Src(u128),
    Ipv6Dst(u128),
    Ipv6Flabel(u32),
    Icmpv6Type(u8),
    Icmpv6Code(u8),
    Ipv6NdTarget(u128),
    Ipv6NdSll([u8; 6]),
    Ipv6NdTll([u8; 6]),
    MplsLabel(u32),
    MplsTc(u8),
    MplsBos(u8),
    PbbIsid(u32),
    /// Pipeline field: only the key changes.
    TunnelId(u64),
}

impl SetField {
    /// The field this action sets.
    pub fn field(&self) -> Field {
        use SetField::*;
        match self {
            EthDst(_) => Field::EthDst,
            EthSrc(_) => Field::EthSrc,
            EthType(_) => Field::EthType,
            VlanVid(_) => Field::VlanVid,
            VlanPcp(_) => Field::VlanPcp,
            IpDscp(_) => Field::IpDscp,
            IpEcn(_) => Field::IpEcn,
            IpProto(_) => Field::IpProto,
            Ipv4Src(_) => Field::Ipv4Src,
            Ipv4Dst(_) => Field::Ipv4Dst,
            TcpSrc(_) => Field::TcpSrc,
            TcpDst(_) => Field::TcpDst,
            UdpSrc(_) => Field::UdpSrc,
            UdpDst(_) => Field::UdpDst,
            SctpSrc(_) => Field::SctpSrc,
            SctpDst(_) => Field::SctpDst,
            Icmpv4Type(_) => Field::Icmpv4Type,
            Icmpv4Code(_) => Field::Icmpv4Code,
            ArpOp(_) => Field::ArpOp,
            ArpSpa(_) => Field::ArpSpa,
            ArpTpa(_) => Field::ArpTpa,
            ArpSha(_) => Field::ArpSha,
            ArpTha(_) => Field::ArpTha,
            Ipv6Src(_) => Field::Ipv6Src,
            Ipv6Dst(_) => Field::Ipv6Dst,
            Ipv6Flabel(_) => Field::Ipv6Flabel,
            Icmpv6Type(_) => Field::Icmpv6Type,
            Icmpv6Code(_) => Field::Icmpv6Code,
            Ipv6NdTarget(_) => Field::Ipv6NdTarget,
            Ipv6NdSll(_) => Field::Ipv6NdSll,
            Ipv6NdTll(_) => Field::Ipv6NdTll,
            MplsLabel(_) => Field::MplsLabel,
            MplsTc(_) => Field::MplsTc,
            MplsBos(_) => Field::MplsBos,
            PbbIsid(_) => Field::PbbIsid,
            TunnelId(_) => Field::TunnelId,
        }
    }

    /// Builds a set-field from a field and its big-endian value (the OXM
    /// payload without mask). `None` if the field is not settable or the
    /// value has the wrong width.
    pub fn from_value(field: Field, value: &[u8]) -> Option<SetField> {
        if value.len() != field.width() {
            return None;
        }
        let n = value.iter().fold(0u128, |a, &b| (a << 8) | u128::from(b));
        let mac = || <[u8; 6]>::try_from(value).ok();
        use SetField as S;
        Some(match field {
            Field::EthDst => S::EthDst(mac()?),
            Field::EthSrc => S::EthSrc(mac()?),
            Field::EthType => S::EthType(n as u16),
            Field::VlanVid => S::VlanVid(n as u16),
            Field::VlanPcp => S::VlanPcp(n as u8),
            Field::IpDscp => S::IpDscp(n as u8),
            Field::IpEcn => S::IpEcn(n as u8),
            Field::IpProto => S::IpProto(n as u8),
            Field::Ipv4Src => S::Ipv4Src(n as u32),
            Field::Ipv4Dst => S::Ipv4Dst(n as u32),
            Field::TcpSrc => S::TcpSrc(n as u16),
            Field::TcpDst => S::TcpDst(n as u16),
            Field::UdpSrc => S::UdpSrc(n as u16),
            Field::UdpDst => S::UdpDst(n as u16),
            Field::SctpSrc => S::SctpSrc(n as u16),
            Field::SctpDst => S::SctpDst(n as u16),
            Field::Icmpv4Type => S::Icmpv4Type(n as u8),
            Field::Icmpv4Code => S::Icmpv4Code(n as u8),
            Field::ArpOp => S::ArpOp(n as u16),
            Field::ArpSpa => S::ArpSpa(n as u32),
            Field::ArpTpa => S::ArpTpa(n as u32),
            Field::ArpSha => S::ArpSha(mac()?),
            Field::ArpTha => S::ArpTha(mac()?),
            Field::Ipv6Src => S::Ipv6Src(n),
            Field::Ipv6Dst => S::Ipv6Dst(n),
            Field::Ipv6Flabel => S::Ipv6Flabel(n as u32),
            Field::Icmpv6Type => S::Icmpv6Type(n as u8),
            Field::Icmpv6Code => S::Icmpv6Code(n as u8),
            Field::Ipv6NdTarget => S::Ipv6NdTarget(n),
            Field::Ipv6NdSll => S::Ipv6NdSll(mac()?),
            Field::Ipv6NdTll => S::Ipv6NdTll(mac()?),
            Field::MplsLabel => S::MplsLabel(n as u32),
            Field::MplsTc => S::MplsTc(n as u8),
            Field::MplsBos => S::MplsBos(n as u8),
            Field::PbbIsid => S::PbbIsid(n as u32),
            Field::TunnelId => S::TunnelId(n as u64),
            _ => return None,
        })
    }
}

/// [`set_field`](super::set_field) for every field, without the fast paths.
pub fn set_field_general(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    sf: SetField,
) -> Result<(), RewriteError> {
    use SetField as S;
    let f = sf.field();
    if let S::TunnelId(v) = sf {
        key.set_tunnel_id(v);
        return Ok(());
    }
    ensure(buf, key, f.layer());
    if !key.has(f) {
        return Err(RewriteError::MissingField(f));
    }
    let d = buf.data_mut();
    let o = key.offsets;
    let l3 = usize::from(o.l3);
    let l4 = usize::from(o.l4);
    let v6 = key.eth_type == ethertype::IPV6;
    let bad = Err(RewriteError::BadValue(f));
    match sf {
        S::EthDst(m) => {
            patch(d, 0, &m, &[])?;
            key.eth_dst = m;
        }
        S::EthSrc(m) => {
            patch(d, 6, &m, &[])?;
            key.eth_src = m;
        }
        S::EthType(t) => {
            // Below 0x0600 the two bytes would be an 802.3 length.
            if t < 0x0600 {
                return bad;
            }
            patch(d, usize::from(o.eth_type), &t.to_be_bytes(), &[])?;
            reparse(buf, key);
        }
        S::VlanVid(vid) => {
            if o.vlan_tags == 0 {
                return Err(RewriteError::NoVlan);
            }
            let tci = be16_at(d, 14).ok_or(RewriteError::Truncated)?;
            let tci = (tci & 0xf000) | (vid & 0x0fff);
            patch(d, 14, &tci.to_be_bytes(), &[])?;
            key.vlan_vid = (vid & 0x0fff) | VID_PRESENT;
        }
        S::VlanPcp(pcp) => {
            if pcp > 7 {
                return bad;
            }
            let tci = be16_at(d, 14).ok_or(RewriteError::Truncated)?;
            let tci = (tci & 0x1fff) | (u16::from(pcp) << 13);
            patch(d, 14, &tci.to_be_bytes(), &[])?;
            key.vlan_pcp = pcp;
        }
        S::IpDscp(dscp) => {
            if dscp > 63 {
                return bad;
            }
            set_tos(d, key, l3, v6, (dscp << 2) | key.ip_ecn)?;
            key.ip_dscp = dscp;
        }
        S::IpEcn(ecn) => {
            if ecn > 3 {
                return bad;
            }
            set_tos(d, key, l3, v6, (key.ip_dscp << 2) | ecn)?;
            key.ip_ecn = ecn;
        }
        S::IpProto(p) => {
            if v6 {
                let at = ipv6_upper_nh_at(d, l3, usize::from(o.l3_end))?;
                patch(d, at, &[p], &[])?;
            } else {
                patch(d, l3 + 9, &[p], &[ip_ck(key)])?;
            }
            reparse(buf, key);
        }
        S::Ipv4Src(a) => {
            patch(
                d,
                l3 + 12,
                &a.to_be_bytes(),
                &[ip_ck(key), l4_ck(key, true)],
            )?;
            key.ipv4_src = a;
        }
        S::Ipv4Dst(a) => {
            patch(
                d,
                l3 + 16,
                &a.to_be_bytes(),
                &[ip_ck(key), l4_ck(key, true)],
            )?;
            key.ipv4_dst = a;
        }
        S::Ipv6Src(a) => {
            patch(d, l3 + 8, &a.to_be_bytes(), &[l4_ck(key, true)])?;
            key.ipv6_src = a;
        }
        S::Ipv6Dst(a) => {
            patch(d, l3 + 24, &a.to_be_bytes(), &[l4_ck(key, true)])?;
            key.ipv6_dst = a;
        }
        S::Ipv6Flabel(fl) => {
            if fl > 0x000f_ffff {
                return bad;
            }
            let w = be32_at(d, l3).ok_or(RewriteError::Truncated)?;
            patch(d, l3, &((w & 0xfff0_0000) | fl).to_be_bytes(), &[])?;
            key.ipv6_flabel = fl;
        }
        S::TcpSrc(p) | S::UdpSrc(p) => {
            patch(d, l4, &p.to_be_bytes(), &[l4_ck(key, false)])?;
            key.tp_src = p;
        }
        S::TcpDst(p) | S::UdpDst(p) => {
            patch(d, l4 + 2, &p.to_be_bytes(), &[l4_ck(key, false)])?;
            key.tp_dst = p;
        }
        S::SctpSrc(p) | S::SctpDst(p) => {
            if key.ip_frag & frag::FRAGMENT != 0 {
                return Err(RewriteError::SctpFragment);
            }
            let at = if matches!(sf, S::SctpSrc(_)) {
                l4
            } else {
                l4 + 2
            };
            patch(d, at, &p.to_be_bytes(), &[])?;
            sctp_fix(d, key);
            if at == l4 {
                key.tp_src = p;
            } else {
                key.tp_dst = p;
            }
        }
        S::Icmpv4Type(t) | S::Icmpv6Type(t) => {
            patch(d, l4, &[t], &[l4_ck(key, false)])?;
            key.icmp_type = t;
            if v6 {
                // ND fields depend on the type.
                reparse(buf, key);
            }
        }
        S::Icmpv4Code(c) | S::Icmpv6Code(c) => {
            patch(d, l4 + 1, &[c], &[l4_ck(key, false)])?;
            key.icmp_code = c;
            if v6 {
                reparse(buf, key);
            }
        }
        S::ArpOp(op) => {
            patch(d, l3 + 6, &op.to_be_bytes(), &[])?;
            key.arp_op = op;
        }
        S::ArpSha(m) => {
            patch(d, l3 + 8, &m, &[])?;
            key.arp_sha = m;
        }
        S::ArpSpa(a) => {
            patch(d, l3 + 14, &a.to_be_bytes(), &[])?;
            key.arp_spa = a;
        }
        S::ArpTha(m) => {
            patch(d, l3 + 18, &m, &[])?;
            key.arp_tha = m;
        }
        S::ArpTpa(a) => {
            patch(d, l3 + 24, &a.to_be_bytes(), &[])?;
            key.arp_tpa = a;
        }
        S::Ipv6NdTarget(t) => {
            patch(d, l4 + 8, &t.to_be_bytes(), &[l4_ck(key, false)])?;
            key.nd_target = t;
        }
        S::Ipv6NdSll(m) => {
            patch(d, usize::from(o.nd_sll), &m, &[l4_ck(key, false)])?;
            key.nd_sll = m;
        }
        S::Ipv6NdTll(m) => {
            patch(d, usize::from(o.nd_tll), &m, &[l4_ck(key, false)])?;
            key.nd_tll = m;
        }
        S::MplsLabel(_) | S::MplsTc(_) | S::MplsBos(_) => {
            let at = usize::from(o.mpls);
            let w = be32_at(d, at).ok_or(RewriteError::Truncated)?;
            let w = match sf {
                S::MplsLabel(l) if l <= 0x000f_ffff => {
                    key.mpls_label = l;
                    (w & 0xfff) | (l << 12)
                }
                S::MplsTc(tc) if tc <= 7 => {
                    key.mpls_tc = tc;
                    (w & !(7 << 9)) | (u32::from(tc) << 9)
                }
                S::MplsBos(b) if b <= 1 => {
                    key.mpls_bos = b;
                    (w & !(1 << 8)) | (u32::from(b) << 8)
                }
                _ => return bad,
            };
            patch(d, at, &w.to_be_bytes(), &[])?;
        }
        S::PbbIsid(isid) => {
            if isid > 0x00ff_ffff {
                return bad;
            }
            let at = usize::from(o.pbb);
            let w = be32_at(d, at).ok_or(RewriteError::Truncated)?;
            patch(d, at, &((w & 0xff00_0000) | isid).to_be_bytes(), &[])?;
            key.pbb_isid = isid;
        }
        S::TunnelId(_) => {}
    }
    Ok(())
}

/// Offset of the IPv6 next-header byte that names the upper layer: the
/// fixed header's, or that of the last extension header (hop-by-hop,
/// routing, fragment, destination options, authentication) the chain
/// goes through before `end`.
fn ipv6_upper_nh_at(d: &[u8], l3: usize, end: usize) -> Result<usize, RewriteError> {
    let mut at = l3 + 6;
    let mut hdr = l3 + 40;
    loop {
        let nh = *d.get(at).ok_or(RewriteError::Truncated)?;
        let len = match nh {
            ipproto::FRAGMENT => 8,
            ipproto::HOPOPTS | ipproto::ROUTING | ipproto::DSTOPTS => {
                (usize::from(*d.get(hdr + 1).ok_or(RewriteError::Truncated)?) + 1) * 8
            }
            ipproto::AH => (usize::from(*d.get(hdr + 1).ok_or(RewriteError::Truncated)?) + 2) * 4,
            _ => return Ok(at),
        };
        if hdr + 2 > end {
            return Ok(at);
        }
        at = hdr;
        hdr += len;
    }
}

/// Writes the IPv4 TOS byte / IPv6 traffic class.
fn set_tos(d: &mut [u8], key: &FlowKey, l3: usize, v6: bool, tos: u8) -> Result<(), RewriteError> {
    if v6 {
        let w = be16_at(d, l3).ok_or(RewriteError::Truncated)?;
        let w = (w & 0xf00f) | (u16::from(tos) << 4);
        patch(d, l3, &w.to_be_bytes(), &[])
    } else {
        patch(d, l3 + 1, &[tos], &[ip_ck(key)])
    }
}
