//! Any frame: parsing must not panic or read out of bounds, and any sequence
//! of rewrites (chosen by the first input bytes) must not either; after a
//! successful rewrite the key must equal a fresh parse of the new frame.
#![no_main]
use libfuzzer_sys::fuzz_target;
use packet::{parse, rewrite, Field, FlowKey, PacketBuf, SetField};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (ops, frame) = data.split_at(4);
    let mut key = FlowKey::default();
    let _ = parse(frame, &mut key);
    let mut buf = PacketBuf::from_slice(frame);
    for (i, &op) in ops.iter().enumerate() {
        let r = match op % 12 {
            0 => rewrite::push_vlan(&mut buf, &mut key, 0x8100),
            1 => rewrite::pop_vlan(&mut buf, &mut key),
            2 => rewrite::push_mpls(&mut buf, &mut key, 0x8847),
            3 => rewrite::pop_mpls(&mut buf, &mut key, 0x0800),
            4 => rewrite::push_pbb(&mut buf, &mut key, 0x88e7),
            5 => rewrite::pop_pbb(&mut buf, &mut key),
            6 => rewrite::dec_nw_ttl(&mut buf, &mut key),
            7 => rewrite::dec_mpls_ttl(&mut buf, &mut key),
            8 => rewrite::copy_ttl_out(&mut buf, &mut key),
            9 => rewrite::copy_ttl_in(&mut buf, &mut key),
            _ => {
                let f = Field::ALL[(op as usize / 12 + i) % Field::ALL.len()];
                let value = vec![op; f.width()];
                match SetField::from_value(f, &value) {
                    Some(sf) => rewrite::set_field(&mut buf, &mut key, sf),
                    None => Ok(()),
                }
            }
        };
        if r.is_ok() {
            let mut fresh = FlowKey::default();
            let _ = packet::parse_to(buf.data(), &mut fresh, key.depth);
            fresh.in_port = key.in_port;
            fresh.in_phy_port = key.in_phy_port;
            fresh.metadata = key.metadata;
            fresh.tunnel_id = key.tunnel_id;
            assert_eq!(fresh, key, "key differs from a fresh parse after op {op}");
        }
    }
});
