//! Push and pop of VLAN tags, MPLS label stack entries and PBB backbone
//! headers; each parses the packet again afterwards.

use super::checksums::be16_at;
use super::error::RewriteError;
use super::reparse::{ensure, reparse};
use crate::buf::PacketBuf;
use crate::field::Field;
use crate::key::{FlowKey, Layer};
use crate::proto::ethertype;

/// Push VLAN: inserts a tag with TPID `tpid` (0x8100 or 0x88a8) after the
/// MAC addresses. Its VID and PCP are copied from the current outer tag,
/// or 0 if there is none (OpenFlow 1.3.5 §5.12 field copy rules).
pub fn push_vlan(buf: &mut PacketBuf, key: &mut FlowKey, tpid: u16) -> Result<(), RewriteError> {
    if !ethertype::is_vlan(tpid) {
        return Err(RewriteError::BadEthertype(tpid));
    }
    ensure(buf, key, Layer::L2);
    if !key.has(Field::EthType) {
        return Err(RewriteError::MissingField(Field::EthType));
    }
    let tci = if key.offsets.vlan_tags > 0 {
        be16_at(buf.data(), 14).ok_or(RewriteError::Truncated)? & 0xefff
    } else {
        0
    };
    let gap = buf.insert(12, 4)?;
    gap[..2].copy_from_slice(&tpid.to_be_bytes());
    gap[2..].copy_from_slice(&tci.to_be_bytes());
    reparse(buf, key);
    Ok(())
}

/// Pop VLAN: removes the outermost tag.
pub fn pop_vlan(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    ensure(buf, key, Layer::L2);
    if key.offsets.vlan_tags == 0 {
        return Err(RewriteError::NoVlan);
    }
    buf.remove(12, 4)?;
    if key.offsets.vlan_tags == 1 {
        // The only tag went: what follows it moved up 4 bytes unchanged,
        // so the key of a new parse is this one without the tag and with
        // every layer offset 4 less (cheaper than that parse; the property
        // tests compare the two).
        key.vlan_vid = 0;
        key.vlan_pcp = 0;
        key.present.remove(Field::VlanPcp);
        let o = &mut key.offsets;
        o.vlan_tags = 0;
        for off in [
            &mut o.eth_type,
            &mut o.mpls,
            &mut o.pbb,
            &mut o.l3,
            &mut o.l3_end,
            &mut o.l4,
            &mut o.payload,
            &mut o.nd_sll,
            &mut o.nd_tll,
        ] {
            *off = off.saturating_sub(4);
        }
    } else {
        reparse(buf, key);
    }
    Ok(())
}

/// TTL given to a pushed MPLS entry when there is neither an MPLS nor an
/// IP TTL to copy (OpenFlow 1.3.5 §5.12.1, push-tag field values: "0").
pub const DEFAULT_MPLS_TTL: u8 = 0;

/// Push MPLS: inserts a label stack entry after the Ethernet header and
/// VLAN tags and sets the ethertype to `etype` (0x8847 or 0x8848). Label,
/// TC and TTL are copied from the current outer MPLS entry if any (BoS 0);
/// otherwise label 0, TC 0, BoS 1 and the TTL comes from the IP TTL
/// ([`DEFAULT_MPLS_TTL`] if the packet is not IP).
pub fn push_mpls(buf: &mut PacketBuf, key: &mut FlowKey, etype: u16) -> Result<(), RewriteError> {
    if !ethertype::is_mpls(etype) {
        return Err(RewriteError::BadEthertype(etype));
    }
    ensure(buf, key, Layer::L3);
    if !key.has(Field::EthType) {
        return Err(RewriteError::MissingField(Field::EthType));
    }
    let lse = if key.has(Field::MplsLabel) {
        (key.mpls_label << 12) | (u32::from(key.mpls_tc) << 9) | u32::from(key.mpls_ttl)
    } else {
        let ttl = if key.has(Field::IpTtl) {
            key.ip_ttl
        } else {
            DEFAULT_MPLS_TTL
        };
        (1 << 8) | u32::from(ttl)
    };
    let et = usize::from(key.offsets.eth_type);
    let gap = buf.insert(et + 2, 4)?;
    gap.copy_from_slice(&lse.to_be_bytes());
    if let Some(t) = buf.data_mut().get_mut(et..et + 2) {
        t.copy_from_slice(&etype.to_be_bytes());
    }
    reparse(buf, key);
    Ok(())
}

/// Pop MPLS: removes the outermost label stack entry and sets the
/// ethertype to `etype`.
pub fn pop_mpls(buf: &mut PacketBuf, key: &mut FlowKey, etype: u16) -> Result<(), RewriteError> {
    ensure(buf, key, Layer::L2);
    let at = usize::from(key.offsets.mpls);
    if at == 0 {
        return Err(RewriteError::NoMpls);
    }
    buf.remove(at, 4)?;
    let et = usize::from(key.offsets.eth_type);
    if let Some(t) = buf.data_mut().get_mut(et..et + 2) {
        t.copy_from_slice(&etype.to_be_bytes());
    }
    reparse(buf, key);
    Ok(())
}

/// Push PBB: encapsulates the whole frame behind a new backbone header
/// `B-DA B-SA 0x88e7 I-TAG`. B-DA/B-SA are copied from the frame's
/// addresses, I-SID from an existing I-TAG (else 0), I-PCP from the outer
/// VLAN PCP (else 0); DEI and UCA are 0.
pub fn push_pbb(buf: &mut PacketBuf, key: &mut FlowKey, etype: u16) -> Result<(), RewriteError> {
    if etype != ethertype::PBB {
        return Err(RewriteError::BadEthertype(etype));
    }
    ensure(buf, key, Layer::L2);
    if !key.has(Field::EthType) {
        return Err(RewriteError::MissingField(Field::EthType));
    }
    let isid = if key.has(Field::PbbIsid) {
        key.pbb_isid
    } else {
        0
    };
    let pcp = if key.has(Field::VlanPcp) {
        u32::from(key.vlan_pcp)
    } else {
        0
    };
    buf.push_front(18)?;
    let d = buf.data_mut();
    d.copy_within(18..30, 0);
    if let Some(h) = d.get_mut(12..18) {
        h[..2].copy_from_slice(&etype.to_be_bytes());
        h[2..].copy_from_slice(&((pcp << 29) | isid).to_be_bytes());
    }
    reparse(buf, key);
    Ok(())
}

/// Pop PBB: removes the backbone header (B-DA, B-SA, any B-tags, the
/// ethertype and the I-TAG), leaving the customer frame.
pub fn pop_pbb(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    ensure(buf, key, Layer::L2);
    let at = usize::from(key.offsets.pbb);
    if at == 0 {
        return Err(RewriteError::NoPbb);
    }
    buf.pull_front(at + 4)?;
    reparse(buf, key);
    Ok(())
}
