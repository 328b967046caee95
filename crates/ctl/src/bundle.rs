//! `--bundle`: send modifications as one OpenFlow 1.3 bundle (ONF EXT-230,
//! `ofp::bundle`), as `ovs-ofctl --bundle` does: open an atomic, ordered
//! bundle, add every message to it, commit. The switch applies all of them
//! or none.

use ofp::bundle::{ctrl_type, flags, BundleAdd, BundleCtrl, BundleFailedCode};
use ofp::error::ErrorMsg;
use ofp::message::Message;
use ofp::OfpMessage;

use crate::client::{ClientError, Connection};

/// The flags `--bundle` asks for.
pub const FLAGS: u16 = flags::ATOMIC | flags::ORDERED;

fn ctrl(id: u32, ty: u16) -> Message {
    Message::Experimenter(BundleCtrl::new(id, ty, FLAGS).to_experimenter())
}

/// Waits for the answer to control request `xid`: its reply (`Ok(true)`)
/// or an error; errors answering `adds` on the way are collected.
fn wait(
    c: &mut Connection,
    xid: u32,
    adds: &[u32],
    errors: &mut Vec<(u32, ErrorMsg)>,
) -> Result<bool, ClientError> {
    loop {
        let m = c.recv()?;
        match m.body {
            Message::Error(e) if m.xid == xid => {
                errors.push((m.xid, e));
                return Ok(false);
            }
            Message::Error(e) if adds.contains(&m.xid) => errors.push((m.xid, e)),
            Message::Experimenter(_) if m.xid == xid => return Ok(true),
            _ => {}
        }
    }
}

/// Sends `mods` as one bundle with id `id` and returns every OFPT_ERROR
/// that answered the bundle's messages (empty: committed). A failing
/// message's own error comes before the commit's BUNDLE_FAILED/MSG_FAILED.
pub fn send_bundle(
    c: &mut Connection,
    id: u32,
    mods: Vec<Message>,
) -> Result<Vec<(u32, ErrorMsg)>, ClientError> {
    let mut errors = Vec::new();
    let open = c.send(ctrl(id, ctrl_type::OPEN_REQUEST))?;
    if !wait(c, open, &[], &mut errors)? {
        return Ok(errors);
    }
    let mut adds = Vec::with_capacity(mods.len());
    for m in mods {
        // The embedded message carries the add message's xid.
        let xid = c.peek_xid();
        let add = BundleAdd {
            bundle_id: id,
            flags: FLAGS,
            message: OfpMessage::new(xid, m).encode(),
            properties: Vec::new(),
        };
        adds.push(c.send(Message::Experimenter(add.to_experimenter()))?);
    }
    let commit = c.send(ctrl(id, ctrl_type::COMMIT_REQUEST))?;
    wait(c, commit, &adds, &mut errors)?;
    Ok(errors)
}

/// Whether an error is a bundle error (printed by name).
pub fn is_bundle_error(e: &ErrorMsg) -> Option<BundleFailedCode> {
    BundleFailedCode::of_error(e)
}
