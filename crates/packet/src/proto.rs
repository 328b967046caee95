//! Protocol numbers the parser and rewriter use.

/// Ethertypes.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    /// 802.1Q customer VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service VLAN tag (QinQ outer tag).
    pub const QINQ: u16 = 0x88a8;
    pub const IPV6: u16 = 0x86dd;
    pub const MPLS: u16 = 0x8847;
    pub const MPLS_MCAST: u16 = 0x8848;
    /// 802.1ah PBB I-TAG.
    pub const PBB: u16 = 0x88e7;

    /// Whether `t` is a VLAN tag protocol identifier.
    #[inline]
    pub fn is_vlan(t: u16) -> bool {
        t == VLAN || t == QINQ
    }

    /// Whether `t` is an MPLS ethertype.
    #[inline]
    pub fn is_mpls(t: u16) -> bool {
        t == MPLS || t == MPLS_MCAST
    }
}

/// IP protocol / IPv6 next-header numbers.
pub mod ipproto {
    pub const HOPOPTS: u8 = 0;
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const ROUTING: u8 = 43;
    pub const FRAGMENT: u8 = 44;
    pub const ESP: u8 = 50;
    pub const AH: u8 = 51;
    pub const ICMPV6: u8 = 58;
    pub const NONE: u8 = 59;
    pub const DSTOPTS: u8 = 60;
    pub const SCTP: u8 = 132;
}

/// ICMPv6 neighbor discovery message types and option types.
pub mod nd {
    pub const NEIGHBOR_SOLICIT: u8 = 135;
    pub const NEIGHBOR_ADVERT: u8 = 136;
    pub const OPT_SOURCE_LL: u8 = 1;
    pub const OPT_TARGET_LL: u8 = 2;
}
