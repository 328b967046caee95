use super::*;
use crate::classifier::Rank;
use std::collections::HashMap;

const SHAPE: &Shape = &[(Field::Metadata, u128::MAX >> 64)];

fn r(handle: u32, priority: u16) -> Ref {
    Ref {
        rank: Rank::new(priority, u64::from(handle)),
        handle,
    }
}

/// Checks the index against a model: every key found with its value,
/// every slot reachable from its home without crossing an empty slot
/// (the linear probing invariant), the count and the load limit.
fn check(ex: &Exact, model: &HashMap<u64, (u32, u16)>) {
    assert_eq!(ex.len(), model.len());
    assert!(2 * ex.len() <= ex.capacity());
    for (k, (h, p)) in model {
        assert_eq!(
            ex.get(*k),
            Some(Hit {
                handle: *h,
                priority: *p
            }),
            "key {k:#x}"
        );
    }
    let mask = ex.index_mask();
    for (i, s) in ex.slots.iter().enumerate() {
        if s.is_empty() {
            continue;
        }
        assert!(model.contains_key(&s.key));
        let mut j = ex.home(s.key);
        while j != i {
            assert!(!ex.slots[j].is_empty(), "gap before key {:#x}", s.key);
            j = (j + 1) & mask;
        }
    }
}

/// Packing: spans side by side, the first field lowest; shapes over
/// 64 bits do not pack.
#[test]
fn packs_spans_side_by_side() {
    let shape = [
        (Field::EthType, 0xffff),
        (Field::IpProto, 0xff),
        (Field::Ipv4Src, 0xffff_ff00),
    ];
    let ex = Exact::new(&shape);
    assert!(ex.is_some());
    let Some(ex) = ex else { return };
    assert_eq!(
        ex.pack_values([0x0800, 6, 0x0a01_0200]),
        0x0800 | (6 << 16) | (0x0a_0102 << 24)
    );
    let mut k = FlowKey::new(0);
    assert_eq!(ex.pack_key(&k), None);
    for f in [Field::EthType, Field::IpProto, Field::Ipv4Src] {
        k.present.insert(f);
    }
    k.eth_type = 0x0800;
    k.ip_proto = 6;
    k.ipv4_src = 0x0a01_02ff;
    assert_eq!(
        ex.pack_key(&k),
        Some(ex.pack_values([0x0800, 6, 0x0a01_0200]))
    );
    assert!(Exact::new(&[(Field::Ipv6Dst, u128::MAX)]).is_none());
    assert!(Exact::new(&[(Field::Ipv6Dst, 0xffff << 64)]).is_some());
    assert!(Exact::new(&[(Field::EthDst, 0xffff_ffff_ffff), (Field::EthType, 0xffff)]).is_some());
    assert!(Exact::new(&[
        (Field::EthDst, 0xffff_ffff_ffff),
        (Field::InPort, 0xffff_ffff)
    ])
    .is_none());
    assert!(Exact::new(&[]).is_none());
}

/// The table doubles as keys come and keeps every key; sequential keys
/// (MAC addresses, ports) spread well under the seeded hash.
#[test]
fn grows_and_keeps_keys() {
    let ex = Exact::new(SHAPE);
    assert!(ex.is_some());
    let Some(mut ex) = ex else { return };
    let mut model = HashMap::new();
    for k in 0..20_000u64 {
        ex.set(k, r(k as u32, (k % 7) as u16));
        model.insert(k, (k as u32, (k % 7) as u16));
        if k.is_power_of_two() {
            check(&ex, &model);
        }
    }
    check(&ex, &model);
    assert_eq!(ex.capacity(), 65_536);
    assert!(ex.max_probe() < 40, "max probe {}", ex.max_probe());
    // Replacing a key's entry keeps the count.
    ex.set(5, r(99, 9));
    model.insert(5, (99, 9));
    check(&ex, &model);
    assert_eq!(ex.get(20_000), None);
}

/// Backward-shift deletion with the identity hash: keys crafted into
/// runs that wrap around the end of the slots, removed in every order
/// the generator picks, against a map.
#[test]
fn backward_shift_deletion_keeps_runs_reachable() {
    let ex = Exact::with_identity_hash(SHAPE);
    assert!(ex.is_some());
    let Some(mut ex) = ex else { return };
    // With 2^k slots the home is the top k bits: the last two slots
    // and the first two only.
    let mut model = HashMap::new();
    let mut x = 12345u64;
    let mut wrapped = false;
    for step in 0..4000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let home = [30u64, 31, 0, 1][(x % 4) as usize];
        let key = (home << 59) | ((x >> 40) % 6);
        if x.is_multiple_of(3) || model.len() >= 14 {
            assert_eq!(ex.remove(key), model.remove(&key).is_some());
        } else {
            ex.set(key, r(step, 1));
            model.insert(key, (step, 1));
        }
        // 8, 16, then 32 slots (at most 14 keys): the runs wrap.
        assert!(ex.capacity() <= 32);
        check(&ex, &model);
        wrapped |= ex
            .slots
            .iter()
            .enumerate()
            .any(|(i, s)| !s.is_empty() && i < ex.home(s.key));
    }
    assert!(wrapped, "no run wrapped around");
    for k in model.keys().copied().collect::<Vec<_>>() {
        assert!(ex.remove(k));
        model.remove(&k);
        check(&ex, &model);
    }
    assert!(ex.slots.iter().all(Slot::is_empty));
}
