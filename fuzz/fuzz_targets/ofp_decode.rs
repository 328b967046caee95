//! Any byte string: decoding must not panic; whatever decodes must re-encode
//! to something that decodes to the same message (canonical encoding).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ofp::OfpMessage;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = OfpMessage::decode(data) {
        let bytes = m.encode();
        let again = OfpMessage::decode(&bytes).expect("re-encoded message must decode");
        assert_eq!(again, m);
    }
});
