//! Port names in commands (`in_port=veth1`, `output:veth1`,
//! `watch_port=veth1`, `dump-ports veth1`), resolved as ovs-ofctl does:
//! through the switch's port descriptions (OFPMP_PORT_DESC).
//!
//! The input is first parsed without names, so numbers and reserved
//! names never cost a request and a plain syntax error is reported before
//! anything is connected to. Only when that parse fails are the names
//! fetched (once per command) and the input parsed again with them
//! ([`crate::fields::set_port_names`]); if the switch cannot be reached
//! the first error stands.

use std::time::Duration;

use ofp::multipart::{MultipartReplyBody, MultipartRequestBody};

use crate::client::{Connection, Target};
use crate::fields::{have_port_names, set_port_names};
use crate::syntax_error::SyntaxError;

/// The switch's port names and numbers.
pub fn fetch(target: &str, timeout: Option<Duration>) -> Result<Vec<(String, u32)>, String> {
    let t = Target::parse(target)?;
    let mut c = Connection::connect(&t, timeout).map_err(|e| e.to_string())?;
    match c.multipart(MultipartRequestBody::PortDesc) {
        Ok((_, MultipartReplyBody::PortDesc(ports))) => {
            Ok(ports.into_iter().map(|p| (p.name, p.port_no)).collect())
        }
        Ok(_) => Err("unexpected reply to a port description request".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `parse()`, and again with the switch's port names if it fails and
/// they were not known yet (module comment).
pub fn resolving<T>(
    target: &str,
    timeout: Option<Duration>,
    parse: impl Fn() -> Result<T, SyntaxError>,
) -> Result<T, SyntaxError> {
    match parse() {
        Err(e) if !have_port_names() => match fetch(target, timeout) {
            Ok(names) => {
                set_port_names(names);
                parse()
            }
            Err(_) => Err(e),
        },
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::parse_port;

    #[test]
    fn names_after_they_are_set() {
        // (The thread-local is per test thread.)
        assert_eq!(parse_port("veth1"), None);
        let r = resolving("unix:/nonexistent", None, || {
            parse_port("veth1").ok_or_else(|| SyntaxError::new("bad port", 0, 5))
        });
        assert_eq!(r.unwrap_err().message, "bad port");
        set_port_names(vec![("veth1".into(), 7), ("LOCALX".into(), 9)]);
        assert_eq!(parse_port("veth1"), Some(7));
        assert_eq!(parse_port("VETH1"), None);
        assert_eq!(parse_port("LOCAL"), Some(ofp::port::port_no::LOCAL));
        assert_eq!(parse_port("3"), Some(3));
        let f = crate::flow::parse_flow(
            "in_port=veth1,actions=output:veth1",
            crate::flow::FlowUsage::Add,
        )
        .unwrap()
        .to_flow_mod(ofp::message::flow_mod_command::ADD);
        assert_eq!(f.match_.fields, vec![ofp::oxm::OxmField::InPort(7)]);
        assert_eq!(
            f.instructions,
            vec![ofp::instruction::Instruction::ApplyActions(vec![
                ofp::action::Action::Output {
                    port: 7,
                    max_len: 0
                }
            ])]
        );
    }
}
