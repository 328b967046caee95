//! Translating the controller's actions (which name logical ports) into
//! actions for the switch that only has the trunk.
//!
//! The model: a frame enters the switch on the trunk carrying its access
//! VLAN's tag, and that outer tag stays on it through the pipeline as the
//! record of where it came from ("the location tag"): matches on a logical
//! `in_port` become matches on the tag in every table. The tag is changed
//! only where the controller's actions need it:
//!
//! - output to logical port L: set the outer tag to L's VLAN and output to
//!   the trunk (as OFPP_IN_PORT when the frame came in on the trunk, since
//!   a switch drops outputs to the ingress port);
//! - FLOOD / ALL: one such copy per logical port (FLOOD skips the ingress);
//! - CONTROLLER: the frame goes up with the ingress tag (the proxy maps it
//!   back to `in_port` and strips it), `max_len` grown by the tag's 4 bytes;
//! - the controller's own VLAN actions (push/pop VLAN, set VLAN_VID /
//!   VLAN_PCP) act on the frame as the controller sees it: the location tag
//!   is popped first ("popped" state); outputs then push a fresh outer tag
//!   for the copy and pop it again, so a controller's tag ends up inside the
//!   access tag (QinQ), as on a real access port.
//!
//! Where a later action or table needs the location tag back (output to
//! CONTROLLER or IN_PORT, a group, a following table or the action set),
//! it is restored, which needs the ingress VLAN: known when the flow
//! matches `in_port`; otherwise translation reports [`Refusal::NeedIngress`]
//! and the caller installs the flow once per VLAN (see `messages`).

use ofp::action::Action;
use ofp::error::{BadActionCode, ErrorCode};
use ofp::oxm::OxmField;
use ofp::port::port_no;

use super::portmap::{vid_value, PortMap};

/// Why a translation did not produce actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The actions need the ingress VLAN, which the caller did not know.
    NeedIngress,
    /// Not expressible: the controller gets this OFPT_ERROR.
    Error(ErrorCode, &'static str),
}

pub fn bad_action(c: BadActionCode, what: &'static str) -> Refusal {
    Refusal::Error(ErrorCode::BadAction(c), what)
}

/// Where translated actions run.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    pub map: &'a PortMap,
    /// The ingress VLAN, when known.
    pub ingress: Option<u16>,
    /// The port to send trunk copies to: OFPP_IN_PORT for frames that came
    /// in on the trunk, the trunk's number otherwise (packet-out from the
    /// controller).
    pub trunk_out: u32,
    /// A packet-out whose in_port is CONTROLLER/LOCAL: the frame has no
    /// location tag, FLOOD means every logical port.
    pub from_controller: bool,
}

/// The frame's outer header while the actions run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The outer tag is a location tag: the ingress one (`None`) or the
    /// one of VLAN `Some(v)` after an output rewrote it.
    Tagged(Option<u16>),
    /// No location tag: the frame is as the controller sees it.
    Popped,
}

/// Set-field of the outer tag's VLAN id.
fn set_vid(v: u16) -> Action {
    Action::SetField(OxmField::VlanVid(vid_value(v), None))
}

fn touches_vlan(a: &Action) -> bool {
    matches!(
        a,
        Action::PushVlan(_)
            | Action::PopVlan
            | Action::SetField(OxmField::VlanVid(..) | OxmField::VlanPcp(_))
    )
}

/// Grows a CONTROLLER output's `max_len` by the location tag's 4 bytes
/// (OFPCML_NO_BUFFER and values near it stay).
fn grow(max_len: u16) -> u16 {
    if max_len <= ofp::action::controller_max_len::MAX - 4 {
        max_len + 4
    } else {
        max_len
    }
}

/// Translates one action list (apply-actions, a bucket, a packet-out).
pub struct ListTranslator<'a> {
    ctx: Ctx<'a>,
    state: State,
    out: Vec<Action>,
}

impl<'a> ListTranslator<'a> {
    pub fn new(ctx: Ctx<'a>, state: State) -> Self {
        ListTranslator {
            ctx,
            state,
            out: Vec::new(),
        }
    }

    fn ingress(&self) -> Result<u16, Refusal> {
        self.ctx.ingress.ok_or(Refusal::NeedIngress)
    }

    /// Makes the outer tag the ingress location tag again.
    fn restore_ingress(&mut self) -> Result<(), Refusal> {
        match self.state {
            State::Tagged(None) => {}
            State::Tagged(Some(v)) if Some(v) == self.ctx.ingress => {}
            State::Tagged(Some(_)) => {
                let v = self.ingress()?;
                self.out.push(set_vid(v));
            }
            State::Popped => {
                let v = self.ingress()?;
                self.out.push(Action::PushVlan(0x8100));
                self.out.push(set_vid(v));
            }
        }
        self.state = State::Tagged(None);
        Ok(())
    }

    /// One copy to logical VLAN `v`.
    fn output_vlan(&mut self, v: u16) {
        let trunk = Action::Output {
            port: self.ctx.trunk_out,
            max_len: 0,
        };
        match self.state {
            State::Tagged(cur) => {
                let now = cur.or(self.ctx.ingress);
                if now != Some(v) {
                    self.out.push(set_vid(v));
                }
                self.state = State::Tagged(Some(v));
                self.out.push(trunk);
            }
            State::Popped => {
                self.out.push(Action::PushVlan(0x8100));
                self.out.push(set_vid(v));
                self.out.push(trunk);
                self.out.push(Action::PopVlan);
            }
        }
    }

    fn output(&mut self, port: u32, max_len: u16) -> Result<(), Refusal> {
        if let Some(v) = self.ctx.map.vid_of(port) {
            // The spec drops an output to the ingress port.
            if self.ctx.ingress != Some(v) {
                self.output_vlan(v);
            }
            return Ok(());
        }
        match port {
            port_no::FLOOD | port_no::ALL => {
                let skip = if port == port_no::FLOOD && !self.ctx.from_controller {
                    Some(self.ingress()?)
                } else {
                    None
                };
                let vids: Vec<u16> = self.ctx.map.ports().map(|(_, v)| v).collect();
                for v in vids.into_iter().filter(|v| Some(*v) != skip) {
                    self.output_vlan(v);
                }
            }
            port_no::IN_PORT => {
                if self.ctx.from_controller {
                    return Err(bad_action(
                        BadActionCode::BadOutPort,
                        "output IN_PORT in a packet-out from the controller",
                    ));
                }
                self.restore_ingress()?;
                self.out.push(Action::Output { port, max_len });
            }
            port_no::CONTROLLER => {
                if self.ctx.from_controller {
                    self.out.push(Action::Output { port, max_len });
                } else {
                    self.restore_ingress()?;
                    self.out.push(Action::Output {
                        port,
                        max_len: grow(max_len),
                    });
                }
            }
            port_no::TABLE => {
                if !self.ctx.from_controller {
                    self.restore_ingress()?;
                }
                self.out.push(Action::Output { port, max_len });
            }
            port_no::NORMAL | port_no::LOCAL => self.out.push(Action::Output { port, max_len }),
            _ => {
                return Err(bad_action(
                    BadActionCode::BadOutPort,
                    "output to a port that is not a logical port",
                ))
            }
        }
        Ok(())
    }

    /// Translates `actions` and appends them.
    pub fn push_all(&mut self, actions: &[Action]) -> Result<(), Refusal> {
        for a in actions {
            match a {
                Action::Output { port, max_len } => self.output(*port, *max_len)?,
                Action::Group(_) => {
                    if self.ctx.from_controller {
                        // Buckets are translated for frames from the trunk
                        // (outputs to IN_PORT, a location tag present).
                        return Err(bad_action(
                            BadActionCode::BadOutGroup,
                            "group in a packet-out from the controller",
                        ));
                    }
                    self.restore_ingress()?;
                    self.out.push(a.clone());
                }
                a if touches_vlan(a) => {
                    if let State::Tagged(_) = self.state {
                        if !self.ctx.from_controller {
                            self.out.push(Action::PopVlan);
                        }
                        self.state = State::Popped;
                    }
                    self.out.push(a.clone());
                }
                _ => self.out.push(a.clone()),
            }
        }
        Ok(())
    }

    /// The translated list; `continues`: later instructions or tables need
    /// the location tag back.
    pub fn finish(mut self, continues: bool) -> Result<Vec<Action>, Refusal> {
        if continues && !self.ctx.from_controller {
            self.restore_ingress()?;
        }
        Ok(self.out)
    }
}

/// Translates one action list starting in `state`.
pub fn translate_list(
    ctx: Ctx<'_>,
    state: State,
    actions: &[Action],
    continues: bool,
) -> Result<Vec<Action>, Refusal> {
    let mut t = ListTranslator::new(ctx, state);
    t.push_all(actions)?;
    t.finish(continues)
}

/// Translates a write-actions set. The action set runs at the end of the
/// pipeline in the spec's fixed order (pop, push, set-field, group,
/// output), so it cannot interleave tag changes with outputs: the
/// controller's VLAN actions and FLOOD/ALL are refused there (use
/// apply-actions); an output to logical port L becomes set VLAN_VID + output
/// to the trunk.
pub fn translate_set(ctx: Ctx<'_>, actions: &[Action]) -> Result<Vec<Action>, Refusal> {
    let mut out = Vec::with_capacity(actions.len() + 1);
    for a in actions {
        match a {
            a if touches_vlan(a) => {
                return Err(bad_action(
                    BadActionCode::BadType,
                    "VLAN actions in write-actions (the proxy supports them in apply-actions)",
                ))
            }
            Action::Output { port, max_len } => {
                if let Some(v) = ctx.map.vid_of(*port) {
                    out.push(set_vid(v));
                    out.push(Action::Output {
                        port: ctx.trunk_out,
                        max_len: 0,
                    });
                    continue;
                }
                match *port {
                    port_no::FLOOD | port_no::ALL => {
                        return Err(bad_action(
                            BadActionCode::BadOutPort,
                            "FLOOD/ALL in write-actions (the proxy supports them in apply-actions)",
                        ))
                    }
                    port_no::CONTROLLER => {
                        if let Some(v) = ctx.ingress {
                            out.push(set_vid(v));
                        }
                        out.push(Action::Output {
                            port: *port,
                            max_len: grow(*max_len),
                        });
                    }
                    port_no::IN_PORT | port_no::TABLE | port_no::NORMAL | port_no::LOCAL => {
                        out.push(a.clone())
                    }
                    _ => {
                        return Err(bad_action(
                            BadActionCode::BadOutPort,
                            "output to a port that is not a logical port",
                        ))
                    }
                }
            }
            _ => out.push(a.clone()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u32 = 9;

    fn map() -> PortMap {
        PortMap::new(T, 101, 103, 1).unwrap()
    }

    fn out(port: u32) -> Action {
        Action::Output { port, max_len: 0 }
    }

    fn flow_ctx(map: &PortMap, ingress: Option<u16>) -> Ctx<'_> {
        Ctx {
            map,
            ingress,
            trunk_out: port_no::IN_PORT,
            from_controller: false,
        }
    }

    #[test]
    fn output_to_a_logical_port_retags_and_uses_the_trunk() {
        let m = map();
        let ctx = flow_ctx(&m, Some(101));
        let got = translate_list(ctx, State::Tagged(None), &[out(2)], false).unwrap();
        assert_eq!(got, [set_vid(102), out(port_no::IN_PORT)]);
        // without the ingress known: the same (the tag is set anyway)
        let ctx = flow_ctx(&m, None);
        let got = translate_list(ctx, State::Tagged(None), &[out(3)], false).unwrap();
        assert_eq!(got, [set_vid(103), out(port_no::IN_PORT)]);
        // output back to the ingress port is dropped, as the spec says
        let ctx = flow_ctx(&m, Some(102));
        assert_eq!(
            translate_list(ctx, State::Tagged(None), &[out(2)], false).unwrap(),
            []
        );
    }

    #[test]
    fn flood_is_one_copy_per_other_vlan() {
        let m = map();
        let ctx = flow_ctx(&m, Some(102));
        let got = translate_list(ctx, State::Tagged(None), &[out(port_no::FLOOD)], false).unwrap();
        assert_eq!(
            got,
            [
                set_vid(101),
                out(port_no::IN_PORT),
                set_vid(103),
                out(port_no::IN_PORT)
            ]
        );
        let got = translate_list(ctx, State::Tagged(None), &[out(port_no::ALL)], false).unwrap();
        assert_eq!(
            got.iter().filter(|a| **a == out(port_no::IN_PORT)).count(),
            3
        );
        // FLOOD needs the ingress
        let ctx = flow_ctx(&m, None);
        assert_eq!(
            translate_list(ctx, State::Tagged(None), &[out(port_no::FLOOD)], false),
            Err(Refusal::NeedIngress)
        );
    }

    #[test]
    fn controller_gets_the_ingress_tag_back() {
        let m = map();
        let ctx = flow_ctx(&m, Some(101));
        let got = translate_list(
            ctx,
            State::Tagged(None),
            &[
                out(3),
                Action::Output {
                    port: port_no::CONTROLLER,
                    max_len: 128,
                },
            ],
            false,
        )
        .unwrap();
        assert_eq!(
            got,
            [
                set_vid(103),
                out(port_no::IN_PORT),
                set_vid(101),
                Action::Output {
                    port: port_no::CONTROLLER,
                    max_len: 132
                }
            ]
        );
        // the table-miss: no ingress needed, NO_BUFFER length kept
        let ctx = flow_ctx(&m, None);
        let miss = Action::Output {
            port: port_no::CONTROLLER,
            max_len: 0xffff,
        };
        assert_eq!(
            translate_list(ctx, State::Tagged(None), std::slice::from_ref(&miss), false).unwrap(),
            [miss]
        );
    }

    #[test]
    fn controller_vlan_actions_work_below_the_location_tag() {
        let m = map();
        let ctx = flow_ctx(&m, Some(101));
        let ctrl_tag = Action::SetField(OxmField::VlanVid(vid_value(7), None));
        let got = translate_list(
            ctx,
            State::Tagged(None),
            &[Action::PushVlan(0x8100), ctrl_tag.clone(), out(2)],
            true,
        )
        .unwrap();
        assert_eq!(
            got,
            [
                Action::PopVlan,
                Action::PushVlan(0x8100),
                ctrl_tag,
                Action::PushVlan(0x8100),
                set_vid(102),
                out(port_no::IN_PORT),
                Action::PopVlan,
                // a later table needs the location tag back
                Action::PushVlan(0x8100),
                set_vid(101),
            ]
        );
        // popping the controller's tag pops the location tag first
        let got =
            translate_list(ctx, State::Tagged(None), &[Action::PopVlan, out(3)], false).unwrap();
        assert_eq!(
            got,
            [
                Action::PopVlan,
                Action::PopVlan,
                Action::PushVlan(0x8100),
                set_vid(103),
                out(port_no::IN_PORT),
                Action::PopVlan
            ]
        );
    }

    #[test]
    fn restoring_for_later_tables_needs_the_ingress() {
        let m = map();
        let ctx = flow_ctx(&m, None);
        assert_eq!(
            translate_list(ctx, State::Tagged(None), &[out(2)], true),
            Err(Refusal::NeedIngress)
        );
        let ctx = flow_ctx(&m, Some(103));
        assert_eq!(
            translate_list(ctx, State::Tagged(None), &[out(2)], true).unwrap(),
            [set_vid(102), out(port_no::IN_PORT), set_vid(103)]
        );
    }

    #[test]
    fn packet_out_from_the_controller_pushes_per_copy() {
        let m = map();
        let ctx = Ctx {
            map: &m,
            ingress: None,
            trunk_out: T,
            from_controller: true,
        };
        let got = translate_list(ctx, State::Popped, &[out(port_no::FLOOD)], false).unwrap();
        assert_eq!(got.len(), 12);
        assert_eq!(
            &got[..4],
            [
                Action::PushVlan(0x8100),
                set_vid(101),
                out(T),
                Action::PopVlan
            ]
        );
        assert!(matches!(
            translate_list(ctx, State::Popped, &[out(port_no::IN_PORT)], false),
            Err(Refusal::Error(..))
        ));
        assert!(matches!(
            translate_list(ctx, State::Popped, &[Action::Group(1)], false),
            Err(Refusal::Error(..))
        ));
    }

    #[test]
    fn unknown_ports_and_write_set_limits_are_refused() {
        let m = map();
        let ctx = flow_ctx(&m, Some(101));
        let bad_port = Refusal::Error(
            ErrorCode::BadAction(BadActionCode::BadOutPort),
            "output to a port that is not a logical port",
        );
        assert_eq!(
            translate_list(ctx, State::Tagged(None), &[out(4)], false),
            Err(bad_port.clone())
        );
        assert_eq!(translate_set(ctx, &[out(4)]), Err(bad_port));
        assert_eq!(
            translate_set(ctx, &[out(3)]).unwrap(),
            [set_vid(103), out(port_no::IN_PORT)]
        );
        assert!(translate_set(ctx, &[out(port_no::FLOOD)]).is_err());
        assert!(translate_set(ctx, &[Action::PopVlan]).is_err());
    }
}
