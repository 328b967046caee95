//! Lines of an `add-flows` file, as ovs-ofctl reads them: a flow, which
//! may start with a command word saying what to do with it.
//!
//! ```text
//! priority=10,ip,actions=output:2          # add (no word)
//! add priority=10,ip,actions=output:2      # add
//! modify ip,actions=output:3               # mod-flows
//! modify_strict priority=10,ip,actions=drop  # mod-flows --strict
//! delete in_port=1                         # del-flows
//! delete_strict priority=10,ip             # del-flows --strict
//! ```
//!
//! As in ovs-ofctl, the word may be abbreviated to any prefix (`del`,
//! `mod`, `modify_s`); a prefix shared by two words means the shorter
//! (`d` is `delete`). It ends at a space, tab or comma. A line whose first
//! token is not such a word (e.g. `in_port=1,...`) is a flow to add.

use ofp::message::{flow_mod_command as cmd, FlowMod};

use crate::flow::{parse_flow, FlowUsage};
use crate::syntax_error::SyntaxError;

/// The command words, in the order a prefix is tried: (word, flow-mod
/// command, what the rest of the line is).
const WORDS: [(&str, u8, FlowUsage); 5] = [
    ("add", cmd::ADD, FlowUsage::Add),
    ("delete", cmd::DELETE, FlowUsage::Filter),
    ("delete_strict", cmd::DELETE_STRICT, FlowUsage::Filter),
    ("modify", cmd::MODIFY, FlowUsage::Modify),
    ("modify_strict", cmd::MODIFY_STRICT, FlowUsage::Modify),
];

/// The flow-mod command of `line`'s leading word (ADD without one), its
/// usage and the byte offset where the flow starts.
pub fn command_of(line: &str) -> (u8, FlowUsage, usize) {
    let start = line.len() - line.trim_start().len();
    let rest = &line[start..];
    let len = rest.find([' ', '\t', ',']).unwrap_or(rest.len());
    let word = &rest[..len];
    if !word.is_empty() {
        if let Some((_, c, usage)) = WORDS.iter().find(|(w, ..)| w.starts_with(word)) {
            let after = &rest[len..];
            let skip = after.len() - after.trim_start_matches([' ', '\t', ',']).len();
            return (*c, *usage, start + len + skip);
        }
    }
    (cmd::ADD, FlowUsage::Add, start)
}

/// Parses one line (not blank, not a comment) into its flow-mod. Error
/// offsets are in `line`.
pub fn parse_flow_line(line: &str) -> Result<FlowMod, SyntaxError> {
    let (command, usage, at) = command_of(line);
    let spec = parse_flow(&line[at..], usage).map_err(|mut e| {
        e.offset += at;
        e
    })?;
    Ok(spec.to_flow_mod(command))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ofp::oxm::OxmField;

    #[test]
    fn leading_words() {
        let c = |l: &str| parse_flow_line(l).unwrap();
        let f = c("priority=5,ip,actions=drop");
        assert_eq!((f.command, f.priority), (cmd::ADD, 5));
        assert_eq!(c("add priority=5,ip,actions=drop"), f);
        assert_eq!(c("  a,priority=5,ip,actions=drop"), f);
        let m = c("modify ip,actions=output:3");
        assert_eq!(m.command, cmd::MODIFY);
        assert_eq!(c("mod ip,actions=output:3"), m);
        assert_eq!(
            c("modify_strict priority=5,ip,actions=drop").command,
            cmd::MODIFY_STRICT
        );
        let d = c("delete in_port=1");
        assert_eq!(d.command, cmd::DELETE);
        assert_eq!(d.match_.fields, vec![OxmField::InPort(1)]);
        assert_eq!(d.table_id, ofp::message::table_id::ALL);
        assert_eq!(c("del\tin_port=1"), d);
        assert_eq!(c("d in_port=1"), d);
        assert_eq!(c("delete_strict priority=5,ip").command, cmd::DELETE_STRICT);
        // A delete of everything.
        assert!(c("delete").match_.fields.is_empty());
        // Not a word: a flow to add.
        assert_eq!(c("in_port=1,actions=drop").command, cmd::ADD);
    }

    #[test]
    fn errors_point_into_the_line() {
        let line = "modify ip,nw_srcc=1.2.3.4,actions=drop";
        let e = parse_flow_line(line).unwrap_err();
        assert_eq!(&line[e.offset..e.offset + e.len], "nw_srcc");
        // A delete takes no actions; an add needs them.
        assert!(parse_flow_line("delete ip,actions=drop").is_err());
        assert!(parse_flow_line("add ip").is_err());
    }
}
