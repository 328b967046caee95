//! `decode` — print OpenFlow 1.3 messages given as hex, one per argument (or
//! one per line on stdin), the way the switch sees them: the typed message, or
//! the exact OFPT_ERROR (type, code) it would answer with.
//!
//! ```sh
//! cargo run -q -p ofp --example decode -- 0402000800000001
//! ```

use ofp::error::ErrorMsg;
use ofp::{Message, OfpMessage};
use std::io::BufRead;

fn show(hex_text: &str) {
    let clean: String = hex_text.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = match hex::decode(&clean) {
        Ok(b) => b,
        Err(e) => {
            println!("not hex ({e}): {hex_text}");
            return;
        }
    };
    match OfpMessage::decode(&bytes) {
        Ok(m) => {
            println!("decoded {} bytes: {m:?}", bytes.len());
            let again = m.encode();
            let same = if again == bytes {
                "identical"
            } else {
                "canonical form differs"
            };
            println!("re-encoded: {same}");
        }
        Err(e) => {
            let (t, c) = e.code.type_code();
            println!("refused: {e}");
            let err = OfpMessage::new(
                bytes
                    .get(4..8)
                    .map_or(0, |x| u32::from_be_bytes([x[0], x[1], x[2], x[3]])),
                Message::Error(ErrorMsg::from_request(e.code, &bytes)),
            );
            println!(
                "the switch answers OFPT_ERROR type={t} code={c}: {}",
                hex::encode(err.encode())
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            if !line.trim().is_empty() {
                show(&line);
            }
        }
    } else {
        args.iter().for_each(|a| show(a));
    }
}
