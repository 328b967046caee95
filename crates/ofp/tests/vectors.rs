//! Forward cross-check: every wire vector os-ken produced
//! (tests/vectors/ofp/*.json, written by python/tools/gen_ofp_vectors.py)
//! must decode with `OfpMessage::decode` and re-encode byte-identically.
//!
//! Corpus vectors marked `oxflow_rejects` (os-ken test captures oxflow
//! refuses on purpose) must instead give a `DecodeError`, never a panic.
//!
//! All failures are collected and reported together (one line per vector,
//! with the decode error or the first differing byte), so one run shows
//! everything the codec still gets wrong.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ofp::OfpMessage;
use serde_json::Value;

fn vector_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/ofp")
}

/// One vector as stored in the JSON files (only the fields this test uses).
struct Vector {
    file: String,
    name: String,
    category: String,
    bytes: Vec<u8>,
    /// Set for corpus vectors oxflow refuses on purpose (the reason).
    rejects: Option<String>,
}

fn load_vectors() -> Vec<Vector> {
    let dir = vector_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no vector files in {} (run python/tools/gen_ofp_vectors.py)",
        dir.display()
    );
    let mut out = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("read vector file");
        let json: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: invalid JSON: {e}"));
        let items = match json {
            Value::Array(items) => items,
            other => vec![other],
        };
        for item in items {
            let name = item["name"].as_str().expect("vector name").to_owned();
            let category = item["category"]
                .as_str()
                .unwrap_or("uncategorised")
                .to_owned();
            let hex_str = item["hex"].as_str().expect("vector hex");
            let bytes =
                hex::decode(hex_str).unwrap_or_else(|e| panic!("{file}: {name}: bad hex: {e}"));
            let rejects = item["oxflow_rejects"].as_str().map(str::to_owned);
            out.push(Vector {
                file: file.clone(),
                name,
                category,
                bytes,
                rejects,
            });
        }
    }
    assert!(!out.is_empty(), "vector files hold no vectors");
    out
}

/// Describe where two byte strings first differ.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let at = want
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    let window = |b: &[u8]| {
        let end = (at + 16).min(b.len());
        hex::encode(&b[at.min(end)..end])
    };
    format!(
        "length want {} got {}; first difference at byte {at}: want {}.. got {}..",
        want.len(),
        got.len(),
        window(want),
        window(got)
    )
}

#[test]
fn os_ken_vectors_decode_and_reencode_identically() {
    let vectors = load_vectors();
    // category -> (total, passed)
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for v in &vectors {
        let entry = counts.entry(v.category.clone()).or_default();
        entry.0 += 1;
        let outcome = std::panic::catch_unwind(|| match OfpMessage::decode(&v.bytes) {
            Err(e) if v.rejects.is_some() => {
                println!("  known reject {}: {e:?}", v.name);
                Ok(())
            }
            Err(e) => Err(format!("decode error: {e:?}")),
            Ok(_) if v.rejects.is_some() => Err(format!(
                "decodes although listed as refused ({}); update CORPUS_REJECTS in \
                 python/tools/gen_ofp_vectors.py",
                v.rejects.as_deref().unwrap_or_default()
            )),
            Ok(msg) => {
                let again = msg.encode();
                if again == v.bytes {
                    Ok(())
                } else {
                    Err(format!(
                        "re-encode differs: {}",
                        first_difference(&v.bytes, &again)
                    ))
                }
            }
        });
        match outcome {
            Ok(Ok(())) => entry.1 += 1,
            Ok(Err(why)) => failures.push(format!("{}:{}: {why}", v.file, v.name)),
            Err(_) => failures.push(format!("{}:{}: PANIC in decode/encode", v.file, v.name)),
        }
    }
    println!("os-ken forward vectors (category: passed/total):");
    for (cat, (total, passed)) in &counts {
        println!("  {cat:<12} {passed:>4}/{total}");
    }
    let total = vectors.len();
    println!("  {:<12} {:>4}/{total}", "all", total - failures.len());
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {total} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
