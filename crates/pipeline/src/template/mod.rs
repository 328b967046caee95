//! Templates: code specialised for one common shape of pipeline, used by
//! [`Pipeline::process_batch`] in place of the general path for the
//! packets it fits, with exactly the same effect (ESwitch's idea: pick the
//! code from the shape of the tables, not from the traffic, so there is no
//! cache an attacker could fill).
//!
//! A pipeline no template serves goes the per-table way when its table 0
//! can answer from frames (`crate::per_table`: lookups from the frame
//! table by table, a key made only when needed), which gets part of the
//! templates' speed for any shape (docs/bench/pipeline-per-table-
//! 2026-11-28.md); the templates stay because they still forward their
//! shapes' packets faster, with no executor state at all.
//!
//! The general path serves any pipeline: it parses a frame into a
//! ~200-byte `FlowKey`, looks the key up through the table's classifier
//! (whatever its kind), then runs the matched entry's program op by op
//! with an action set, goto and metadata. For an L2 switch's table (MAC
//! -> port) most of that work is generality the packet does not need.
//!
//! # The Ethernet template
//!
//! It serves a batch when
//! - no rule needs more of a frame than its Ethernet header
//!   (`Pipeline::parse_layer` is L2: no match, action, meter or group
//!   installed needs L3), and
//! - table 0's entries other than match-everything ones all match on one
//!   set of fields (one shape) taken from the Ethernet header and the
//!   ingress port: in_port, eth_dst, eth_src, eth_type, vlan_vid,
//!   metadata (`Auto::ethernet_index`: the table's exact index);
//!
//! and within such a batch, a packet when
//! - its frame is at least an Ethernet header, without a VLAN tag, and
//!   not MPLS or PBB (the general parse reads more for those, and may
//!   find them malformed),
//! - the exact index's answer needs no tuple space lookup (no tie with a
//!   match-everything entry of the same priority; `Auto::answer_known`),
//! - and the matched entry's program is one output to a standard port
//!   (`Program::only_output`).
//!
//! For such a packet it reads the header fields straight from the frame
//! into the index's packed key (`Exact::pack_ethernet`: no `FlowKey`),
//! probes, counts the lookup and the entry's hit as `FlowTable::lookup`
//! and `HotEntry::hit` do, and outputs as the general path's lone standard
//! output does. Every other packet takes the general path from the start
//! (the template wrote nothing for it). Packets are handled in batch
//! order either way, so outputs and counters are those of
//! [`Pipeline::process`] packet by packet (`tests::template_props`
//! compares them).
//!
//! When the batch is warmed (big tables, see `batch`), the template
//! classifies a chunk in stages as the warm stages do: every packed key
//! and home slot first, then every probe (`Exact::get_many`), so the
//! cache misses of a chunk's packets overlap.
//!
//! # The route template
//!
//! An IPv4 router's pipeline: table 0 sends the port's packets to a
//! routing table (`in_port=1 -> goto:1`), or is the routing table itself;
//! the routing table holds prefixes of `ipv4_dst` under `eth_type=0x0800`
//! (and perhaps a table-miss entry), and each route's entry hands the
//! packet to its next hop: a group of one bucket that decrements the TTL,
//! rewrites both MACs and outputs (HARMLESS's L3 pipeline; the compiled
//! form of such a bucket is `Op::Route`), or those actions in the entry
//! itself.
//!
//! It serves a batch received on port P when
//! - the deepest layer any rule needs is L3 (`Pipeline::parse_layer`:
//!   no rule looks at L4 headers, so the general parse of a frame stops
//!   after its IP header, and whatever it accepts the template can
//!   check);
//! - either table 0 is a routing table, or table 0 matches on nothing but
//!   the ingress port (so every packet from P finds the same entry) and
//!   P's entry there is a goto to a routing table and nothing else
//!   (`Program::only_goto`);
//! - the routing table's classifier is a trie that alone answers for it
//!   (`Auto::ipv4_routes`: every entry but match-everything ones is an
//!   `ipv4_dst` prefix under `eth_type=0x0800`);
//!
//! and within such a batch, a packet when
//! - its frame is IPv4 without a VLAN tag, with a header the general
//!   parse accepts (version 4, header length at least 20 bytes, a total
//!   length between the header's and the frame's), not a fragment
//!   (`frag_drop` may drop those), with a TTL above 1 (the decrement of
//!   a lower one goes to the controller or nowhere: `invalid_ttl`);
//! - the best entry for its destination (the trie's answer or a
//!   match-everything entry, by rank) runs only apply-actions
//!   (`Program::apply_only`), which are a route (`Op::Route`) to a
//!   standard port, or a group of type INDIRECT or ALL with one bucket
//!   that is such a route.
//!
//! For such a packet it reads the destination straight from the frame,
//! walks the trie with it (`Lpm::lookup_v4_many`: no `FlowKey`, no parse,
//! no context probe), counts both tables' lookups and entries, the group
//! and its bucket, lowers the TTL with the checksum, writes the MACs and
//! outputs, as the general path does for it. A chunk is classified in
//! stages (every frame, every trie walk level by level, every entry),
//! then run in batch order, the template's packets and the others alike.
//!
//! # The chain template
//!
//! A pipeline that moves packets from table to table with little on the
//! way: an access gateway (HARMLESS's: table 0 maps `in_port, vlan_vid`
//! to a pop-VLAN and a customer's NAT table, which rewrites the source
//! address and port and goes to a routing table), a load balancer behind
//! an ACL (HARMLESS's `lb_acl`: table 0 allows source blocks to a virtual
//! IP and denies some hosts' ports, table 1 hands each VIP to a SELECT
//! group of backends), or exact tables that end in an output.
//!
//! It serves a batch when the deepest layer any rule needs is L3 or L4,
//! the route template does not serve the batch, and table 0 is a table
//! it can look packets up in (below). Within such a batch, it takes a
//! packet when
//! - its frame is IPv4 with no VLAN tag or one 802.1Q tag (TPID 0x8100),
//!   a header the general parse accepts, not a fragment, carrying TCP or
//!   UDP with a header the general parse accepts at L4 (`chain_frame`);
//! - from table 0 on, each table it reaches either
//!   - is one it looks packets up in: with an exact index whose shape
//!     reads only the fields it reads of a frame (`Exact::common_only`:
//!     in_port, metadata, the MACs, eth_type, vlan_vid, ip_proto, the
//!     IPv4 addresses, the L4 ports), all of which the packet has, and
//!     whose answer needs no tuple space lookup (`Auto::answer_known`);
//!     or without one, when the table matches on those fields alone and
//!     every entry's program is one it can take (`by_fields`,
//!     `Program::chainable`), through the trie and the tuple space
//!     (`Auto::lookup_fields_many`: the same probes as a key's, with the
//!     values read from the frame, `FrameFields`);
//!
//!     where the entry found (there must be one) either ends the trip:
//!     an output to a standard port (`Program::only_output`), nothing at
//!     all (`Program::drops`: a drop), or one group (`Program::only_group`)
//!     whose one bucket for the packet (chosen as the general path
//!     chooses: by the flow hash of the packet's fields there for
//!     SELECT, by liveness for fast-failover) is one output to a standard
//!     port or a backend's rewrite (`Op::SetIpv4EthDstOutput`); or runs at
//!     most one step and a goto (`Program::chain`): nothing, a pop-VLAN of
//!     the frame's tag, or a NAT rewrite (`Op::SetIpv4Port`) of its
//!     protocol's port (at most `CHAIN_MAX` such entries);
//!   - or is a routing table the route template could use
//!     (`Auto::ipv4_routes`), reached without a tag, with a TTL above 1,
//!     whose best entry for the destination (after any NAT on the way)
//!     is a route as the route template takes them: the trip ends.
//!
//! It reads the fields a key would have straight from the frame into the
//! exact indexes' common values (`Exact::pack_common`: no `FlowKey`, no
//! parse), applies each step's change to them (a pop sets vlan_vid to 0,
//! a NAT writes its address and port), and looks the chunk's packets up
//! in rounds, each taking every packet one table further whatever table
//! it is at (every exact probe of the round, their home slots all read
//! before any probe so that their cache misses overlap; then the lookups
//! by fields, all of a table's packets together; then every entry found),
//! the trie walks of the routing table last, together. Then it runs each packet it took in
//! its place in the batch: every table's lookup and entry counted with
//! the frame's length at that table, the tag removed, the NAT written
//! with the checksums (`packet::rewrite::nat_ipv4_at`, the bytes
//! `set_ipv4_port` writes), and the end: the output, the drop (counters
//! only), the group's bucket counted and its rewrite written
//! (`packet::rewrite::ipv4_addr_at`, the bytes `set_ipv4_addr` writes,
//! and the MAC) before the output, or the next hop as the general path
//! does them (`tests::chain_props` and `tests::balancer_props` compare
//! them).
//!
//! Why `by_fields` asks every entry to be one the template can take: the
//! general path looks a packet the template leaves up again from the
//! start, so a table whose entries mostly send packets elsewhere (to the
//! controller, through write-actions) would pay for two lookups. The
//! count of such entries is kept per table (`FlowTable::unchained`), so
//! the choice depends on the rules only, never on the traffic.

pub(crate) mod chain;
mod chain_run;
pub(crate) mod ethernet;
pub(crate) mod route;
mod route_run;
mod run;
pub(crate) mod ways;
