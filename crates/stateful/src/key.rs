//! Extractors (BEBA's lookup and update *scopes*): the header fields whose
//! values, concatenated in order, form a packet's flow key.
//!
//! # Key bytes, as the BEBA switch makes them
//!
//! The BEBA switch copies each field's value out of its parsed-packet
//! record, where the parser stored integer fields it converted from network
//! order (`ntohs`/`ntohl`) in *host* order, and addresses as they are on the
//! wire. On the x86 hosts it runs on, a flow key therefore holds:
//!
//! - little-endian: `in_port`, `metadata`, `tunnel_id`, `eth_type`,
//!   `vlan_vid` (the 12-bit VID, without OFPVID_PRESENT), the TCP / UDP /
//!   SCTP ports, `tcp_flags`, `ipv6_flabel`, `mpls_label`, `pbb_isid` (its
//!   low 3 bytes);
//! - wire order: MAC and IP addresses, `arp_op`, one-byte fields.
//!
//! Controllers build SET_FLOW_STATE keys in that layout (an IPv4 address
//! key is `[10, 0, 0, 1]`, a TCP port 22 key is `[22, 0]`), and state
//! statistics report it, so oxflow uses the same layout.
//!
//! A packet lacking one of the fields has no key (its state is NULL). The
//! fields a packet has are those oxflow's parser marks present, except
//! `vlan_vid`, which only a tagged frame has (the BEBA switch records no
//! VID for an untagged frame), and `in_phy_port` / `ipv6_exthdr`, which the
//! BEBA switch never records.

use ofp::beba::{BebaErrorCode, MAX_FIELD_COUNT, MAX_KEY_LEN};
use ofp::oxm::class;
use packet::{Field, FlowKey, OxmId, VID_PRESENT};

/// A flow key: up to [`MAX_KEY_LEN`] bytes, zero after `len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBuf {
    len: u8,
    bytes: [u8; MAX_KEY_LEN],
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf {
            len: 0,
            bytes: [0; MAX_KEY_LEN],
        }
    }
}

impl KeyBuf {
    /// A key from its bytes; `None` if empty or longer than
    /// [`MAX_KEY_LEN`].
    pub fn from_bytes(b: &[u8]) -> Option<KeyBuf> {
        if b.is_empty() || b.len() > MAX_KEY_LEN {
            return None;
        }
        let mut k = KeyBuf::default();
        k.bytes[..b.len()].copy_from_slice(b);
        k.len = b.len() as u8;
        Some(k)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The key as little-endian 64-bit words (zero-padded), `n` of them.
    #[inline]
    pub(crate) fn word(&self, i: usize) -> u64 {
        let mut w = [0u8; 8];
        if let Some(s) = self.bytes.get(i * 8..i * 8 + 8) {
            w.copy_from_slice(s);
        }
        u64::from_le_bytes(w)
    }

    #[inline]
    pub(crate) fn from_words(words: &[u64], len: usize) -> KeyBuf {
        let mut k = KeyBuf::default();
        for (i, w) in words.iter().enumerate() {
            if let Some(s) = k.bytes.get_mut(i * 8..i * 8 + 8) {
                s.copy_from_slice(&w.to_le_bytes());
            }
        }
        k.len = len.min(MAX_KEY_LEN) as u8;
        k
    }

    #[inline]
    fn push(&mut self, b: &[u8]) {
        let at = usize::from(self.len);
        if let Some(d) = self.bytes.get_mut(at..at + b.len()) {
            d.copy_from_slice(b);
            self.len += b.len() as u8;
        }
    }
}

/// Whether the BEBA switch keeps `f` in host (little-endian) order.
fn little_endian(f: Field) -> bool {
    use Field::*;
    matches!(
        f,
        InPort
            | Metadata
            | TunnelId
            | EthType
            | VlanVid
            | TcpSrc
            | TcpDst
            | UdpSrc
            | UdpDst
            | SctpSrc
            | SctpDst
            | TcpFlags
            | Ipv6Flabel
            | MplsLabel
            | PbbIsid
    )
}

/// `f`'s value given in OXM (big-endian) order, `f.width()` bytes, turned
/// into key bytes (see the module comment).
pub fn key_bytes(f: Field, oxm_value: &[u8]) -> Vec<u8> {
    let mut v = oxm_value.to_vec();
    if little_endian(f) {
        v.reverse();
    }
    v
}

/// An extractor: 1 to [`MAX_FIELD_COUNT`] fields.
///
/// Packs into one `u64` (byte 0: field count, bytes 1..=6: the fields'
/// numbers plus one) so that a table's scopes are single atomic words the
/// packet path reads without a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extractor {
    count: u8,
    fields: [u8; MAX_FIELD_COUNT],
    key_len: u8,
}

impl Extractor {
    /// The extractor of a SET_L/U_EXTRACTOR's OXM headers. Refused: no
    /// field or too many (`BAD_EXP_LEN`, as the BEBA switch), a masked or
    /// non-basic header or one oxflow does not extract (`SET_EXTRACTOR`),
    /// a header whose length is not the field's (`BAD_EXP_LEN`).
    pub fn from_oxm(headers: &[u32]) -> Result<Extractor, BebaErrorCode> {
        if headers.is_empty() || headers.len() > MAX_FIELD_COUNT {
            return Err(BebaErrorCode::BadExpLen);
        }
        let mut e = Extractor {
            count: 0,
            fields: [0; MAX_FIELD_COUNT],
            key_len: 0,
        };
        for &h in headers {
            let cls = (h >> 16) as u16;
            let has_mask = h & 0x100 != 0;
            let field = ((h >> 9) & 0x7f) as u8;
            let len = (h & 0xff) as usize;
            let f = (cls == class::OPENFLOW_BASIC && !has_mask)
                .then(|| Field::from_oxm(OxmId::basic(field)))
                .flatten()
                .filter(|f| !matches!(f, Field::InPhyPort | Field::Ipv6Exthdr));
            let Some(f) = f else {
                return Err(BebaErrorCode::SetExtractor);
            };
            if len != f.width() {
                return Err(BebaErrorCode::BadExpLen);
            }
            e.fields[usize::from(e.count)] = f as u8;
            e.count += 1;
            e.key_len += len as u8;
        }
        if usize::from(e.key_len) > MAX_KEY_LEN {
            return Err(BebaErrorCode::BadExpLen);
        }
        Ok(e)
    }

    /// Bytes of the keys this extractor makes.
    pub fn key_len(&self) -> usize {
        usize::from(self.key_len)
    }

    pub fn fields(&self) -> impl Iterator<Item = Field> + '_ {
        self.fields[..usize::from(self.count)]
            .iter()
            .filter_map(|&n| Field::from_u8(n))
    }

    /// The OXM headers this extractor was made of.
    pub fn oxm_headers(&self) -> Vec<u32> {
        self.fields()
            .map(|f| ofp::oxm::oxm_header(class::OPENFLOW_BASIC, f as u8, false, f.width() as u8))
            .collect()
    }

    /// Where field number `oxm_field` lies in the key: (offset, length).
    pub fn position(&self, oxm_field: u8) -> Option<(usize, usize)> {
        let mut off = 0;
        for f in self.fields() {
            if f as u8 == oxm_field {
                return Some((off, f.width()));
            }
            off += f.width();
        }
        None
    }

    /// 0 means "no extractor".
    pub(crate) fn pack(&self) -> u64 {
        let mut w = u64::from(self.count);
        for (i, f) in self.fields[..usize::from(self.count)].iter().enumerate() {
            w |= u64::from(f + 1) << (8 * (i + 1));
        }
        w
    }

    pub(crate) fn unpack(w: u64) -> Option<Extractor> {
        let count = (w & 0xff) as u8;
        if count == 0 || usize::from(count) > MAX_FIELD_COUNT {
            return None;
        }
        let mut e = Extractor {
            count,
            fields: [0; MAX_FIELD_COUNT],
            key_len: 0,
        };
        for i in 0..usize::from(count) {
            let n = ((w >> (8 * (i + 1))) & 0xff) as u8;
            let f = Field::from_u8(n.wrapping_sub(1))?;
            e.fields[i] = f as u8;
            e.key_len += f.width() as u8;
        }
        Some(e)
    }

    /// The key of the packet whose parsed fields are `k`, or `None` if it
    /// lacks one of the fields.
    #[inline]
    pub fn extract(&self, k: &FlowKey) -> Option<KeyBuf> {
        let mut out = KeyBuf::default();
        for f in self.fields() {
            if !extract_field(k, f, &mut out) {
                return None;
            }
        }
        Some(out)
    }
}

/// Appends `f`'s key bytes to `out`; false if the packet lacks `f`.
#[inline]
fn extract_field(k: &FlowKey, f: Field, out: &mut KeyBuf) -> bool {
    use Field::*;
    if !k.has(f) {
        return false;
    }
    match f {
        InPort => out.push(&k.in_port.to_le_bytes()),
        Metadata => out.push(&k.metadata.to_le_bytes()),
        TunnelId => out.push(&k.tunnel_id.to_le_bytes()),
        EthDst => out.push(&k.eth_dst),
        EthSrc => out.push(&k.eth_src),
        EthType => out.push(&k.eth_type.to_le_bytes()),
        VlanVid => {
            if k.vlan_vid & VID_PRESENT == 0 {
                return false;
            }
            out.push(&(k.vlan_vid & 0x0fff).to_le_bytes())
        }
        VlanPcp => {
            if k.vlan_vid & VID_PRESENT == 0 {
                return false;
            }
            out.push(&[k.vlan_pcp])
        }
        IpDscp => out.push(&[k.ip_dscp]),
        IpEcn => out.push(&[k.ip_ecn]),
        IpProto => out.push(&[k.ip_proto]),
        Ipv4Src => out.push(&k.ipv4_src.to_be_bytes()),
        Ipv4Dst => out.push(&k.ipv4_dst.to_be_bytes()),
        TcpSrc | UdpSrc | SctpSrc => out.push(&k.tp_src.to_le_bytes()),
        TcpDst | UdpDst | SctpDst => out.push(&k.tp_dst.to_le_bytes()),
        TcpFlags => out.push(&k.tcp_flags.to_le_bytes()),
        Icmpv4Type | Icmpv6Type => out.push(&[k.icmp_type]),
        Icmpv4Code | Icmpv6Code => out.push(&[k.icmp_code]),
        ArpOp => out.push(&k.arp_op.to_be_bytes()),
        ArpSpa => out.push(&k.arp_spa.to_be_bytes()),
        ArpTpa => out.push(&k.arp_tpa.to_be_bytes()),
        ArpSha => out.push(&k.arp_sha),
        ArpTha => out.push(&k.arp_tha),
        Ipv6Src => out.push(&k.ipv6_src.to_be_bytes()),
        Ipv6Dst => out.push(&k.ipv6_dst.to_be_bytes()),
        Ipv6Flabel => out.push(&k.ipv6_flabel.to_le_bytes()),
        Ipv6NdTarget => out.push(&k.nd_target.to_be_bytes()),
        Ipv6NdSll => out.push(&k.nd_sll),
        Ipv6NdTll => out.push(&k.nd_tll),
        MplsLabel => out.push(&k.mpls_label.to_le_bytes()),
        MplsTc => out.push(&[k.mpls_tc]),
        MplsBos => out.push(&[k.mpls_bos]),
        PbbIsid => out.push(&k.pbb_isid.to_le_bytes()[..3]),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ofp::oxm::oxm_header;

    fn h(f: Field) -> u32 {
        oxm_header(class::OPENFLOW_BASIC, f as u8, false, f.width() as u8)
    }

    fn tcp_packet() -> FlowKey {
        let frame = [
            // eth: dst, src, type IPv4
            0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00, //
            // IPv4: 10.0.0.1 -> 10.0.0.2, TCP
            0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, //
            // TCP 1234 -> 22
            0x04, 0xd2, 0, 22, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x02, 0, 0, 0, 0, 0, 0,
        ];
        let mut k = FlowKey::new(3);
        let _ = packet::parse(&frame, &mut k);
        k
    }

    #[test]
    fn key_bytes_follow_the_reference_byte_order() {
        let k = tcp_packet();
        let e = Extractor::from_oxm(&[h(Field::Ipv4Src), h(Field::TcpDst), h(Field::InPort)])
            .expect("valid");
        assert_eq!(e.key_len(), 10);
        let key = e.extract(&k).expect("all present");
        assert_eq!(key.as_bytes(), [10, 0, 0, 1, 22, 0, 3, 0, 0, 0]);
        assert_eq!(key_bytes(Field::TcpDst, &[0, 22]), [22, 0]);
        assert_eq!(key_bytes(Field::Ipv4Src, &[10, 0, 0, 1]), [10, 0, 0, 1]);
        // TCP flags (SYN), a u16 in host order as the other ports.
        let e = Extractor::from_oxm(&[h(Field::TcpFlags)]).expect("valid");
        assert_eq!(e.extract(&k).expect("present").as_bytes(), [2, 0]);
        assert_eq!(key_bytes(Field::TcpFlags, &[0, 2]), [2, 0]);
    }

    #[test]
    fn missing_field_means_no_key() {
        let k = tcp_packet();
        for f in [Field::UdpSrc, Field::VlanVid, Field::ArpSpa] {
            let e = Extractor::from_oxm(&[h(Field::EthSrc), h(f)]).expect("valid");
            assert_eq!(e.extract(&k), None, "{f:?}");
        }
    }

    #[test]
    fn bad_extractors_are_refused() {
        assert_eq!(Extractor::from_oxm(&[]), Err(BebaErrorCode::BadExpLen));
        assert_eq!(
            Extractor::from_oxm(&[h(Field::EthSrc); 7]),
            Err(BebaErrorCode::BadExpLen)
        );
        let masked = oxm_header(class::OPENFLOW_BASIC, Field::EthSrc as u8, true, 12);
        assert_eq!(
            Extractor::from_oxm(&[masked]),
            Err(BebaErrorCode::SetExtractor)
        );
        let wrong_len = oxm_header(class::OPENFLOW_BASIC, Field::EthSrc as u8, false, 4);
        assert_eq!(
            Extractor::from_oxm(&[wrong_len]),
            Err(BebaErrorCode::BadExpLen)
        );
        assert_eq!(
            Extractor::from_oxm(&[h(Field::Ipv6Src); 4]),
            Err(BebaErrorCode::BadExpLen),
            "64 bytes > 48"
        );
    }

    #[test]
    fn pack_round_trips() {
        let e = Extractor::from_oxm(&[h(Field::EthSrc), h(Field::EthDst), h(Field::Ipv6Src)])
            .expect("valid");
        assert_eq!(Extractor::unpack(e.pack()), Some(e));
        assert_eq!(Extractor::unpack(0), None);
        assert_eq!(e.position(Field::EthDst as u8), Some((6, 6)));
        assert_eq!(
            e.oxm_headers(),
            [h(Field::EthSrc), h(Field::EthDst), h(Field::Ipv6Src)]
        );
    }
}
