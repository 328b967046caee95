//! `parse` — show what the parser extracts from Ethernet frames given as hex
//! (one per argument), and the frame after rewriting the IPv4 source address
//! with incremental checksum updates.
//!
//! ```sh
//! cargo run -q -p packet --example parse -- 0200000000020200000000010800...
//! ```

use packet::{parse, rewrite, Field, FlowKey, PacketBuf, SetField};

fn show(hex_text: &str) {
    let Ok(frame) = hex::decode(hex_text.trim()) else {
        println!("not hex: {hex_text}");
        return;
    };
    let mut key = FlowKey::default();
    let result = parse(&frame, &mut key);
    println!(
        "{} bytes, parsed to {:?}: {result:?}",
        frame.len(),
        key.depth
    );
    for f in Field::ALL {
        if let Some(v) = key.get(f) {
            println!("  {:<16} {}", f.name(), hex::encode(v.as_bytes()));
        }
    }
    let mut buf = PacketBuf::from_slice(&frame);
    match rewrite::set_field(&mut buf, &mut key, SetField::Ipv4Src(0xc0a8_0001)) {
        Ok(()) => println!("  set ipv4_src=192.168.0.1 -> {}", hex::encode(buf.data())),
        Err(e) => println!("  set ipv4_src refused: {e}"),
    }
}

fn main() {
    std::env::args().skip(1).for_each(|a| show(&a));
}
