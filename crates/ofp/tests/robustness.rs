//! "Never panic on bytes": the decoder meets arbitrary and mutated input.
//!
//! Seeds are the os-ken cross-check vectors under `tests/vectors/ofp/`; each is
//! mutated (byte flips, truncation, length-field lies, splices) and decoded.
//! Whatever decodes must re-encode canonically: decode(encode(m)) == m.

use ofp::OfpMessage;
use proptest::prelude::*;
use std::path::PathBuf;

fn vector_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/ofp")
}

/// Collect every `"hex"` string found anywhere in a JSON value. Vectors
/// marked `oxflow_rejects` (foreign captures oxflow refuses on purpose) are
/// mutation seeds too, but are not expected to decode.
fn collect_hex(v: &serde_json::Value, out: &mut Vec<Vec<u8>>, rejects: &mut Vec<Vec<u8>>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::String(h)) = m.get("hex") {
                if let Ok(b) = hex::decode(h) {
                    if m.contains_key("oxflow_rejects") {
                        rejects.push(b.clone());
                    }
                    out.push(b);
                }
            }
            for (k, x) in m {
                if k != "hex" {
                    collect_hex(x, out, rejects);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_hex(x, out, rejects)),
        _ => {}
    }
}

/// The seed corpus and the seeds oxflow refuses on purpose, read once per
/// test binary.
fn corpus() -> &'static Corpus {
    static SEEDS: std::sync::OnceLock<Corpus> = std::sync::OnceLock::new();
    SEEDS.get_or_init(load_seeds)
}

fn seeds() -> &'static [Vec<u8>] {
    &corpus().0
}

/// (every seed, the seeds that must be refused)
type Corpus = (Vec<Vec<u8>>, Vec<Vec<u8>>);

fn load_seeds() -> Corpus {
    let mut out = Vec::new();
    let mut rejects = Vec::new();
    if let Ok(rd) = std::fs::read_dir(vector_dir()) {
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&p).expect("readable vector file");
                let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
                collect_hex(&v, &mut out, &mut rejects);
            }
        }
    }
    (out, rejects)
}

/// Decode; if accepted, check the canonical re-encoding property.
fn check(bytes: &[u8]) {
    if let Ok(m) = OfpMessage::decode(bytes) {
        let enc = m.encode();
        let again = OfpMessage::decode(&enc)
            .unwrap_or_else(|e| panic!("re-encoded message does not decode: {e}\n{m:?}"));
        assert_eq!(again, m, "decode(encode(m)) != m");
    }
}

#[test]
fn seeds_exist_and_decode() {
    let s = seeds();
    assert!(
        s.len() >= 100,
        "expected the os-ken vectors under tests/vectors/ofp, found {}",
        s.len()
    );
    for b in s.iter().filter(|b| !corpus().1.contains(b)) {
        OfpMessage::decode(b).unwrap_or_else(|e| panic!("seed does not decode: {e}"));
    }
}

#[test]
fn every_truncation_of_every_seed_is_refused_or_canonical() {
    for b in seeds() {
        let b = b.as_slice();
        for n in 0..b.len() {
            // Keep the header's length field honest so we reach the body
            // decoders, not just the length check.
            let mut t = b[..n].to_vec();
            if t.len() >= 4 {
                let l = (t.len() as u16).to_be_bytes();
                t[2] = l[0];
                t[3] = l[1];
            }
            check(&t);
            check(&b[..n]);
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, xor: u8 },
    Set16 { at: usize, val: u16 },
    Truncate { to: usize },
    Extend { bytes: Vec<u8> },
}

fn apply(seed: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for m in muts {
        match m {
            Mutation::Flip { at, xor } if !b.is_empty() => {
                let i = at % b.len();
                b[i] ^= xor;
            }
            Mutation::Set16 { at, val } if b.len() >= 2 => {
                let i = at % (b.len() - 1);
                b[i..i + 2].copy_from_slice(&val.to_be_bytes());
            }
            Mutation::Truncate { to } => {
                let n = to % (b.len() + 1);
                b.truncate(n);
            }
            Mutation::Extend { bytes } => b.extend_from_slice(bytes),
            _ => {}
        }
    }
    // Often fix the header length so the body decoders are exercised.
    if b.len() >= 4 && muts.len().is_multiple_of(2) {
        let l = (b.len().min(0xffff) as u16).to_be_bytes();
        b[2] = l[0];
        b[3] = l[1];
    }
    b
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 1u8..=255).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        2 => (any::<usize>(), prop_oneof![Just(0u16), Just(1), Just(4), Just(7), Just(8), Just(0xffff), any::<u16>()])
            .prop_map(|(at, val)| Mutation::Set16 { at, val }),
        1 => any::<usize>().prop_map(|to| Mutation::Truncate { to }),
        1 => proptest::collection::vec(any::<u8>(), 1..24).prop_map(|bytes| Mutation::Extend { bytes }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(mut b in proptest::collection::vec(any::<u8>(), 0..600)) {
        check(&b);
        // the same bytes behind a plausible OpenFlow 1.3 header
        if b.len() >= 8 {
            b[0] = 4;
            b[1] %= 30;
            let l = (b.len() as u16).to_be_bytes();
            b[2] = l[0];
            b[3] = l[1];
            check(&b);
        }
    }

    #[test]
    fn mutated_vectors_never_panic(
        pick in any::<prop::sample::Index>(),
        muts in proptest::collection::vec(mutation(), 1..5),
    ) {
        let s = seeds();
        prop_assume!(!s.is_empty());
        let seed = &s[pick.index(s.len())];
        check(&apply(seed, &muts));
    }
}
