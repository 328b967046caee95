//! Lookup structures of a flow table, and the automatic choice between
//! them ([`Auto`]).
//!
//! # What a classifier answers
//!
//! Given a packet's [`FlowKey`], the spec wants the matching entry of
//! highest priority; among equal priorities this switch picks the earliest
//! installed one. Both criteria fold into one integer, the entry's
//! [`Rank`]: priority in the high 16 bits, the complement of the
//! installation sequence number below, so "better" is simply "larger".
//! Every structure below returns the [`Ref`] (rank + handle) of the best
//! matching entry (the exact index: its handle and priority), and
//! [`Auto`] answers with the handle; the table turns the handle into a
//! position in its store. Structures never see the store: counters, timeouts and flow-mod
//! semantics stay in `table.rs` / `flow_mod.rs` whatever the structure.
//!
//! # The shape of a match
//!
//! A compiled match is a list of `(field, value, mask)` triples. Its
//! *shape* is the list of `(field, mask)` pairs without the values. Two
//! entries of the same shape match a packet only if the packet's masked
//! bits equal their values, so all entries of one shape can be found with
//! a single hash probe keyed by the packet's masked bits. That is the base
//! of everything here.
//!
//! # Tuple space search ([`tss`]) — always maintained
//!
//! ```text
//!  any:   [r0]                  match-everything entries (the table-miss)
//!  order: [(max prio 300, S2), (max prio 200, S0)]
//!  S0  shape [(EthType, ffff), (Ipv4Dst, ffffff00)]
//!      buckets: {[0x0800, 10.1.2.0]: [r5], [0x0800, 10.9.9.0]: [r7, r2]}
//!  S2  shape [(InPort, ffffffff)]    buckets: {[3]: [r9]}
//! ```
//!
//! One *subtable* per non-empty shape, each a hash table from masked values
//! to the list of entries with exactly that match (equal matches at
//! different priorities share a bucket, best first); match-everything
//! entries need no probe and sit in one list. Subtables are kept ordered by
//! the highest priority they hold. A lookup starts from the best
//! match-everything entry, probes the subtables in that order and stops as
//! soon as the next subtable's max priority is below the best match found
//! so far (equal priority still probes: an earlier installed entry might
//! hide there). Insert and remove touch one bucket, one
//! per-subtable priority count (a small ordered map, so the max priority
//! is known after a removal too) and, when the max priority changes, move
//! one subtable in the order vector. The probes are allocation-free: the
//! packet's masked bits are fed straight into the hasher and compared in
//! place.
//!
//! The same structure is the table's strict index: `(priority, match)` ->
//! entry is one shape probe plus one bucket probe (ADD's replace check,
//! DELETE_STRICT, MODIFY_STRICT, the replicas' removals).
//!
//! # Exact match ([`exact`]) — beside the tuple space, one shape only
//!
//! The L2 MAC table case: every entry has the same shape (plus, maybe,
//! match-everything entries such as the table-miss, which stay in the
//! tuple space's `any`). When that shape's masks span at most 64 bits in
//! all (eth_dst 48; in_port 32; eth_type + ip_proto + ipv4_src 56), the
//! packet's masked bits pack into one `u64`, and an open-addressing table
//! of 16-byte slots (packed key, handle, priority) holds the best entry of
//! each distinct match:
//!
//! ```text
//!  key --pack--> 0x0000_0a01_0203_0806 --hash--> slot 5
//!  slots  [ - | - | - | - | k9 | k1 h7 p100 | k4 | - ]   load <= 1/2
//! ```
//!
//! One multiply-fold hash and usually one cache line per probe, against
//! the tuple space's hasher over 128-bit words, SwissTable control bytes
//! and a 64-byte bucket compared through a packed key built for it
//! ([`tss`]). The tuple space stays the strict index and holds every
//! entry; the exact index mirrors each bucket's best entry (an insert or
//! remove updates one slot from the bucket), and is compared with the
//! best match-everything entry by priority (the tuple space decides an
//! equal priority).
//!
//! # Longest prefix match ([`lpm`]) — beside the tuple space
//!
//! A routing table has many shapes (one per prefix length) that differ in
//! the mask of a single field, a prefix mask (`eth_type=0x0800,
//! ipv4_dst=10.0.0.0/8`, `.../24`, ...). Tuple space search would probe up
//! to 33 subtables. Shapes of the form "the same context fields S, plus a
//! prefix of field F (length 0 = F absent)" also go into a multibit trie
//! per context value, described in [`lpm`]: a packet walks at most
//! `width(F)/4 + 1` nodes, and the best rank along the path wins, so the
//! answer stays exact when priorities do not follow prefix lengths.
//!
//! The trie stands for the subtables in its form, which are marked in the
//! tuple space; shapes outside the form (an ARP rule, an `in_port` rule
//! next to the routes) stay ordinary subtables. A lookup walks the trie,
//! then the unmarked subtables with the trie's answer as the best so far
//! (so the priority cut-off applies), then compares the match-everything
//! entries.
//!
//! Which form: when a new shape arrives and there is no trie, every pair of
//! the first [`LPM_PAIR_SHAPES`] subtables that differ in exactly one
//! field, prefix-masked on both sides and shorter than the field on one,
//! proposes a form; the form most subtables share wins if it covers at
//! least half of them, and the trie is built from the tuple space's
//! buckets. The trie is then kept up to date entry by entry. It is dropped
//! when its last entry goes, or when new shapes outside its form leave it
//! standing for less than half of the subtables (then a form is sought
//! afresh).
//!
//! # Linear scan ([`linear`]) — small tables
//!
//! Up to [`LINEAR_MAX`] entries, a rank-sorted list checked entry by entry
//! is cheaper than a few hash probes.
//!
//! # The choice ([`Auto`], recomputed after every change in O(1))
//!
//! | table                                                   | lookup via |
//! |---------------------------------------------------------|------------|
//! | fewer than [`HASH_MIN_ENTRIES`] entries, or up to [`LINEAR_MAX`] entries and not exactly one non-empty shape | `linear` |
//! | exactly one non-empty shape                             | `hash`: `exact` if the shape packs in 64 bits, else `tss` (one subtable) |
//! | a trie exists (LPM form covering at least half of the shapes when chosen) | `lpm` (trie + other subtables) |
//! | otherwise                                               | `tss`      |
//!
//! The tuple space is always up to date (it is also the strict index). The
//! linear list exists while the table has at most [`LINEAR_MAX`] entries
//! (rebuilt from the tuple space when a table shrinks back to that size).
//! The exact index exists while the table has exactly one non-empty shape
//! and it packs (whatever the kind, so it is ready when the table passes
//! [`HASH_MIN_ENTRIES`]): it is dropped when a second shape arrives and
//! built from the tuple space's buckets when the table is back to one
//! shape. Apart from these (re)builds of a trie or of the exact index when
//! the set of *shapes* changes, no insert or remove rebuilds anything
//! proportional to the table (the exact index doubles its slots now and
//! then, rehashing its own keys: O(1) amortised).
//!
//! # Cost model (per packet, per table) and adversarial traffic
//!
//! There is no flow cache: the cost of a lookup depends on the rules, not
//! on what traffic came before, so an attacker who controls only packets
//! cannot build up state that slows the switch ("tuple space explosion"
//! attacks against OVS work by making the *megaflow cache* grow one
//! subtable per crafted packet; there is nothing here that grows).
//!
//! - `linear`: at most [`LINEAR_MAX`] match checks.
//! - `hash` (exact index): packing the shape's fields, one multiply-fold
//!   hash, a linear probe of 1.3 slots on average at the worst load
//!   (usually one cache line), and reading the best match-everything
//!   entry; a full tuple space lookup only when that entry's priority
//!   equals the found one's. The seeds are random per index.
//! - `hash` (shape over 64 bits): one hash of the shape's masked fields +
//!   one SwissTable probe (+ the best match-everything entry).
//! - `lpm`: one context probe (a scan of a few packed words when there
//!   are few contexts), then for a context with a direct table (see
//!   [`lpm`]) one read of it plus at most `(width - 16)/4` trie nodes (4
//!   for IPv4: a /24 takes 3 reads in all), otherwise at most `width/4`
//!   nodes after skipping the one-child chain at the top (8 for IPv4, 32
//!   for IPv6); one cache line per node; plus one probe per subtable
//!   outside the form.
//! - `tss`: at most one probe per subtable, i.e. per distinct shape the
//!   *controller* installed. Packets choose only how early the scan stops:
//!   a packet that misses the high-priority subtables pays the whole list,
//!   which is the bound to plan for. The hash is keyed with a random seed
//!   per table, so crafted packets cannot aim at long probe sequences
//!   either (and buckets hold only controller-installed entries). A
//!   subtable of at least 8 buckets with an exact field of 16 bits or
//!   more keeps a filter (`tss` module comment): most probes that cannot
//!   match cost one bit read instead of the hash of every field; a packet
//!   made to hit a set bit pays the probe as without it.
//!
//! Control plane: insert/remove are O(shape length + log n) for the tuple
//! space and the priority order, plus O(width/4) trie nodes in `lpm` form
//! (and, with a direct table, the 2^(16 - L) slots under a prefix of
//! length L < 16, else one slot) or one slot (amortised) of the exact
//! index;
//! a subtable's position in the order moves by one `Vec` shift (the number
//! of shapes, not of entries).

mod auto;
pub mod exact;
pub mod fields;
pub mod linear;
pub mod lpm;
pub mod plugged;
mod rank;
pub mod tss;

#[cfg(test)]
mod tests;

pub(crate) use auto::Auto;
pub use auto::Kind;
pub use exact::{Exact, Hit};
pub use plugged::LookupStructure;
pub(crate) use rank::{splitmix64, SEQ_LIMIT};
pub use rank::{Rank, Ref, Same, Shape, HASH_MIN_ENTRIES, LINEAR_MAX};
