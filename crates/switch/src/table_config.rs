//! Per-table lookup structures in the configuration: `[[table]] id = 3`,
//! `lookup = "NAME"` in the file, `--table-lookup 3=NAME` on the command
//! line. `NAME` is `"auto"` (the built-in choice per table) or a
//! structure registered with `pipeline::table_kinds::register` by the
//! program that runs the switch before it reads its configuration
//! (docs/ARCHITECTURE.md, "Add a table kind").
//!
//! Checked here: the table id (0..N_TABLES), the name (registered), a
//! table listed twice. The callers prefix the message with where the value
//! came from (`--table-lookup` or FILE:LINE:COLUMN).

/// One table's lookup: the table id and the structure's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLookup {
    pub table: u8,
    pub lookup: String,
}

/// A table id as written, checked.
pub fn table_id(id: i64) -> Result<u8, String> {
    match u8::try_from(id) {
        Ok(t) if usize::from(t) < pipeline::N_TABLES => Ok(t),
        _ => Err(pipeline::table_kinds::no_such_table(id, pipeline::N_TABLES)),
    }
}

/// A structure name as written, checked against the registry.
pub fn lookup_name(name: &str) -> Result<String, String> {
    pipeline::table_kinds::check(name)?;
    Ok(name.to_string())
}

/// Whether the last of `list` names a table an earlier one names.
pub fn check_last(list: &[TableLookup]) -> Result<(), String> {
    match list.split_last() {
        Some((last, rest)) if rest.iter().any(|t| t.table == last.table) => {
            Err(format!("table {} is listed twice", last.table))
        }
        _ => Ok(()),
    }
}

impl std::str::FromStr for TableLookup {
    type Err = String;

    /// `ID=NAME` (`--table-lookup`).
    fn from_str(s: &str) -> Result<Self, String> {
        let (id, name) = s
            .split_once('=')
            .ok_or_else(|| "expected ID=NAME, e.g. 3=my_lookup".to_string())?;
        let id: i64 = id
            .trim()
            .parse()
            .map_err(|_| format!("`{id}` is not a table id"))?;
        Ok(TableLookup {
            table: table_id(id)?,
            lookup: lookup_name(name.trim())?,
        })
    }
}
