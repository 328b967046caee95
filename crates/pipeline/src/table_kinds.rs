//! Lookup structures by name: a crate outside the pipeline registers a
//! [`LookupStructure`] constructor under a name ([`register`]), and the
//! switch's configuration plugs it into a table by that name ([`plug`]).
//!
//! The registry is one process-wide map from name to constructor, read
//! when a pipeline is set up (never on the packet path). `"auto"` is the
//! built-in choice (`crate::classifier`'s linear, exact hash, LPM trie or
//! tuple space after every change) and cannot be registered over; [`plug`]
//! with it takes a plugged structure out.

use crate::classifier::LookupStructure;
use crate::pipeline::Pipeline;
use std::collections::BTreeMap;
use std::sync::RwLock;

/// Makes an empty structure.
pub type Ctor = fn() -> Box<dyn LookupStructure>;

/// The built-in choice of structure (no plugged structure).
pub const AUTO: &str = "auto";

/// Name -> constructor (module comment).
static KINDS: RwLock<BTreeMap<String, Ctor>> = RwLock::new(BTreeMap::new());

/// Registers (or replaces) a structure under `name`. Refused for
/// `"auto"` and for an empty name.
pub fn register(name: &str, ctor: Ctor) -> Result<(), String> {
    if name.is_empty() || name == AUTO {
        return Err(format!(
            "`{name}` cannot name a registered lookup structure"
        ));
    }
    let mut kinds = KINDS.write().unwrap_or_else(|e| e.into_inner());
    kinds.insert(name.to_string(), ctor);
    Ok(())
}

/// Every name a table's lookup may be set to: `"auto"` and the
/// registered ones.
pub fn names() -> Vec<String> {
    let kinds = KINDS.read().unwrap_or_else(|e| e.into_inner());
    std::iter::once(AUTO.to_string())
        .chain(kinds.keys().cloned())
        .collect()
}

/// An empty structure registered as `name`; `Ok(None)` for `"auto"`; an
/// error naming the known ones otherwise.
pub fn build(name: &str) -> Result<Option<Box<dyn LookupStructure>>, String> {
    if name == AUTO {
        return Ok(None);
    }
    // (The read guard ends with the statement: `names` takes its own.)
    let ctor = KINDS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .copied();
    match ctor {
        Some(ctor) => Ok(Some(ctor())),
        None => Err(format!(
            "unknown table lookup `{name}` (known: {})",
            names().join(", ")
        )),
    }
}

/// Whether a table's lookup may be set to `name` (`build`'s error if
/// not).
pub fn check(name: &str) -> Result<(), String> {
    build(name).map(drop)
}

/// The error for table `id` in a pipeline of `tables` tables that has no
/// such table (the switch's configuration checks ids with it too).
pub fn no_such_table(id: i64, tables: usize) -> String {
    format!(
        "table {id} does not exist (tables 0..={})",
        tables.saturating_sub(1)
    )
}

/// Sets table `table`'s lookup structure to the one registered as `name`
/// (filled with the table's entries; `"auto"`: the built-in choice).
/// Errors say which table or name is wrong.
pub fn plug(p: &mut Pipeline, table: u8, name: &str) -> Result<(), String> {
    let n = p.tables().len();
    let s = build(name)?;
    let t = p
        .table_mut(table)
        .ok_or_else(|| no_such_table(i64::from(table), n))?;
    t.set_lookup(s);
    Ok(())
}
