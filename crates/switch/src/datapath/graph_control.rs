//! Run-time changes of the workers' module graph (`ofp::graph_change`,
//! `oxflow ctl graph-change / tc-set / tc-attach`, docs/graph.md).
//!
//! The control thread keeps a **validation copy** of the workers' graph
//! ([`GraphControl`]): a `graph::Runtime` built from the same
//! configuration and every change accepted since, over an environment
//! with the same port and trunk names whose receive handles receive nothing, a
//! pipeline of its own and a fake clock; it never runs. A change set is
//! applied to this copy first. If the copy refuses it, the switch answers
//! with the refusal and sends nothing to the workers (the copy is rebuilt
//! from the configuration and the accepted changes, since a change set
//! whose class part is refused leaves its graph part applied). If the
//! copy accepts it, the set goes to every worker as one operation
//! (`Op::Graph`), applied between two scheduling rounds, and the reply
//! follows a barrier: every worker runs the new graph. A worker cannot
//! refuse what the copy accepted, apart from resources the copy does not
//! model (a transmit socket that cannot be opened), which it logs.
//!
//! The copy follows the port set (`super::ports_runtime`): a port added at
//! run time joins its environment, so a change may add a `port_inc` or
//! `port_out` on it, and a port leaves it when deleted; `del-port` is
//! refused while a module of the graph uses the port ([`GraphControl::user_of`]),
//! so no worker's module is left reading a closed port.

use super::graph_openflow::{OpenFlowParts, Side};
use super::graph_run::{add_input_set, add_port_to, input_name, registry, GraphSpec, NoRx};
use super::graph_trunk::TrunkSources;
use super::ops::{Mode, Op};
use super::trunk::{Trunk, TrunkRx};
use super::worker::PacketInSender;
use super::{Datapath, LearningTable, SwitchPorts};
use graph::{ChangeSet, Env, FakeClock, Registry, Runtime};
use ofp::graph_change::GraphChange;
use ofp::message::Message;
use ofp::multipart::{ExperimenterMultipart, Multipart, MultipartReplyBody};
use ofp::OfpMessage;
use std::sync::Arc;

/// What happened to the copy since it was built, replayed in order to
/// rebuild it.
enum Step {
    Change(Arc<ChangeSet>),
    Ports(SwitchPorts),
}

/// The validation copy and what rebuilds it (module comment).
pub(crate) struct GraphControl {
    spec: Arc<GraphSpec>,
    /// The default graph (no graph configured): ports added and deleted
    /// at run time bring and take their input module (`super::graph_run`).
    pub default: bool,
    /// The ports the switch started with (the copy is built with them).
    ports: SwitchPorts,
    trunks: Vec<Arc<Trunk>>,
    events: PacketInSender,
    accepted: Vec<Step>,
    reg: Registry,
    copy: Runtime<FakeClock>,
    env: Env,
}

impl GraphControl {
    /// Builds the copy of `spec`'s graph.
    pub fn new(
        spec: Arc<GraphSpec>,
        default: bool,
        ports: SwitchPorts,
        trunks: Vec<Arc<Trunk>>,
        events: PacketInSender,
    ) -> Result<GraphControl, String> {
        let reg = registry();
        let (copy, env) = Self::build(&spec, &ports, &trunks, &events, &reg)?;
        Ok(GraphControl {
            spec,
            default,
            ports,
            trunks,
            events,
            accepted: Vec::new(),
            reg,
            copy,
            env,
        })
    }

    fn build(
        spec: &GraphSpec,
        ports: &SwitchPorts,
        trunks: &[Arc<Trunk>],
        events: &PacketInSender,
        reg: &Registry,
    ) -> Result<(Runtime<FakeClock>, Env), String> {
        let mut env = Env::new(graph::Shared::default());
        for sp in ports.values() {
            add_port_to(&mut env, sp, Box::new(NoRx));
        }
        let rx = |t: &Arc<Trunk>| TrunkRx {
            trunk: t.clone(),
            rx: Some(Box::new(NoRx)),
        };
        env.put(TrunkSources(trunks.iter().map(rx).collect()));
        env.put(super::graph_tx::TxParts(ports.clone()));
        env.put(OpenFlowParts {
            pipeline: pipeline::Pipeline::default(),
            side: Side {
                mode: Mode::Pipeline,
                events: events.clone(),
                counters: Arc::default(),
                learning: LearningTable::default(),
                ports: ports.clone(),
                flex: None,
                clock: super::Clock::real(),
            },
        });
        let copy =
            Runtime::from_config(&spec.text, &spec.file, reg, &mut env, FakeClock::default())
                .map_err(|e| e.to_string())?;
        Ok((copy, env))
    }

    /// Applies `set` to the copy; on a refusal the copy is as before.
    pub fn check(&mut self, set: &ChangeSet) -> Result<(), String> {
        match self.copy.apply_set(set, &self.reg, &mut self.env) {
            Ok(()) => Ok(()),
            Err(e) => {
                let (mut copy, mut env) = Self::build(
                    &self.spec,
                    &self.ports,
                    &self.trunks,
                    &self.events,
                    &self.reg,
                )?;
                for s in &self.accepted {
                    match s {
                        Step::Change(s) => copy.apply_set(s, &self.reg, &mut env)?,
                        Step::Ports(p) => sync_ports(&mut env, p),
                    }
                }
                self.copy = copy;
                self.env = env;
                Err(e)
            }
        }
    }

    pub fn accept(&mut self, set: Arc<ChangeSet>) {
        self.accepted.push(Step::Change(set));
    }

    /// The port set changed (module comment). In the default graph an
    /// added port gets its input module and a deleted one loses it, as
    /// in the workers (`super::graph_run::GraphRun::add_rx`).
    pub fn set_ports(&mut self, ports: &SwitchPorts) {
        let old = self
            .env
            .get::<super::graph_tx::TxParts>()
            .map(|t| t.0.clone());
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        if self.default {
            for (no, sp) in old.iter().flat_map(|o| o.iter()) {
                if !ports.contains_key(no) {
                    removed.push(sp.name.clone());
                }
            }
            for (no, sp) in ports.iter() {
                if !old.as_ref().is_some_and(|o| o.contains_key(no)) {
                    added.push(sp.name.clone());
                }
            }
        }
        for name in removed {
            let module = input_name(&name);
            if self.user_of(&name).as_deref() == Some(module.as_str()) {
                self.change(&format!("[[remove]]\nname = {module:?}\n"));
            }
        }
        sync_ports(&mut self.env, ports);
        self.accepted.push(Step::Ports(ports.clone()));
        for name in added {
            if self.user_of(&name).is_none() {
                self.change(&add_input_set(&name));
            }
        }
    }

    /// Applies and accepts a change the switch makes itself.
    fn change(&mut self, text: &str) {
        let set = match ChangeSet::parse(text) {
            Ok(s) => s,
            Err(e) => return tracing::warn!("graph copy: {e}"),
        };
        match self.check(&set) {
            Ok(()) => self.accept(Arc::new(set)),
            Err(e) => tracing::warn!("graph copy: {e}"),
        }
    }

    /// Whether deleting port `name` is refused: some module other than
    /// the default graph's own input module uses it; `Some(module)`.
    pub fn refuses_delete(&mut self, name: &str) -> Option<String> {
        let user = self.user_of(name)?;
        (!(self.default && user == input_name(name))).then_some(user)
    }

    /// The module of the graph that receives from or transmits on port
    /// `name`, if one does.
    pub fn user_of(&mut self, name: &str) -> Option<String> {
        self.copy
            .graph
            .modules_mut()
            .find(|(_, m)| m.port() == Some(name))
            .map(|(n, _)| n.to_string())
    }
}

/// Makes the copy's environment hold exactly `ports`.
fn sync_ports(env: &mut Env, ports: &SwitchPorts) {
    let old = env.get::<super::graph_tx::TxParts>().map(|t| t.0.clone());
    for (no, sp) in old.iter().flat_map(|o| o.iter()) {
        if !ports.contains_key(no) {
            env.remove_port(&sp.name);
        }
    }
    for sp in ports.values() {
        if !env.has_port(&sp.name) {
            add_port_to(env, sp, Box::new(NoRx));
        }
    }
    env.put(super::graph_tx::TxParts(ports.clone()));
}

impl Datapath {
    /// Answers a graph change request (module comment).
    pub(crate) fn graph_change(
        &mut self,
        xid: u32,
        e: &ExperimenterMultipart,
        raw: &[u8],
    ) -> Vec<OfpMessage> {
        let t = ofp::experimenter::exp_type::GRAPH_CHANGE;
        let req = match GraphChange::parse(e) {
            Some(Ok(r)) => r,
            Some(Err(d)) => {
                return vec![OfpMessage::new(
                    xid,
                    Message::Error(ofp::error::ErrorMsg::from_request(d.code, raw)),
                )]
            }
            None => return Vec::new(),
        };
        let body = match self.apply_graph_change(&req.text) {
            Ok(()) => Message::MultipartReply(Multipart::new(MultipartReplyBody::Experimenter(
                GraphChange::reply(),
            ))),
            Err(why) => Message::Error(ofp::port_admin::refusal(t, &why)),
        };
        vec![OfpMessage::new(xid, body)]
    }

    /// Validates `text` on the copy, then has every worker apply it.
    pub fn apply_graph_change(&mut self, text: &str) -> Result<(), String> {
        let ctl = &mut self.graph_ctl;
        let set = ChangeSet::parse(text)?;
        ctl.check(&set)?;
        let set = Arc::new(set);
        ctl.accept(set.clone());
        self.broadcast(Op::Graph(set));
        self.barrier();
        Ok(())
    }
}
