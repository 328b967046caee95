//! `oxflow bench run`: resolve parameters, build the topology, start the
//! switch recipe, connect the controller endpoint, drive the experiment's
//! event loop and write the report.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::bail;
use crate::control::{self, ControlConn};
use crate::error::{BenchError, Context, Result};
use crate::experiment::{now_ns, Ctx, Event, Experiment, Params};
use crate::experiments;
use crate::progress::Progress;
use crate::report::{self, Meta};
use crate::switch::{self, RunningSwitch, SwitchKind, EXTERNAL_KEYS, SWITCH_KEYS};
use crate::topology::{self, Iface, Topology};

/// Keys every run accepts besides the experiment's own.
pub const COMMON_KEYS: &[(&str, &str, &str)] = &[(
    "max_seconds",
    "600",
    "stop the event loop after this many seconds (a guard against a stuck experiment)",
)];

/// What `oxflow bench run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOpts {
    pub experiment: String,
    pub switch: SwitchKind,
    pub out: PathBuf,
    /// `--set KEY=VALUE`, in order.
    pub sets: Vec<String>,
    pub config: Option<PathBuf>,
}

fn unknown_experiment(name: &str) -> BenchError {
    let names: Vec<&str> = experiments::all().iter().map(|e| e.name()).collect();
    BenchError(format!(
        "unknown experiment {name:?} (known: {})",
        names.join(", ")
    ))
}

/// A TOML value as the text `--set` would have given.
fn toml_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(a) => a.iter().map(toml_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// Every parameter with its value and source: defaults, then the config
/// file (`[params]` table or top-level keys), then `--set`.
pub fn resolve_params(exp: &dyn Experiment, opts: &RunOpts) -> Result<Params> {
    let mut values: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut help: Vec<String> = Vec::new();
    for p in exp.params() {
        values.insert(p.name.into(), (p.default.into(), "default".into()));
        help.push(p.name.into());
    }
    for (k, d, _) in COMMON_KEYS.iter().chain(SWITCH_KEYS).chain(EXTERNAL_KEYS) {
        values.insert((*k).into(), ((*d).into(), "default".into()));
        help.push((*k).into());
    }
    let declared: std::collections::BTreeSet<String> = values.keys().cloned().collect();
    let known = |k: &str, from: &str| -> Result<()> {
        if declared.contains(k) {
            Ok(())
        } else {
            Err(BenchError(format!(
                "{from}: unknown parameter {k:?} for experiment {} (known: {})",
                exp.name(),
                help.join(", ")
            )))
        }
    };
    if let Some(path) = &opts.config {
        let text = std::fs::read_to_string(path).ctx(format!("config {}", path.display()))?;
        let doc: toml::Table = toml::from_str(&text).ctx(format!("config {}", path.display()))?;
        let from = path.display().to_string();
        let table = match doc.get("params") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(_) => bail!("config {from}: [params] must be a table"),
            None => doc.clone(),
        };
        for (k, v) in &table {
            if matches!(k.as_str(), "experiment" | "switch") {
                continue;
            }
            known(k, &format!("config {from}"))?;
            values.insert(k.clone(), (toml_text(v), from.clone()));
        }
    }
    for s in &opts.sets {
        let Some((k, v)) = s.split_once('=') else {
            bail!("--set {s:?}: expected KEY=VALUE");
        };
        known(k.trim(), &format!("--set {s}"))?;
        values.insert(k.trim().into(), (v.into(), "--set".into()));
    }
    let params = Params { values };
    // Parse every experiment parameter once so a bad value fails before
    // any namespace or switch is created... as text at least: typed checks
    // happen in the experiment; the common ones are checked here.
    let common = || -> Result<()> {
        params.get::<f64>("max_seconds")?;
        params.get::<u32>("workers")?;
        params.get::<bool>("pin")?;
        Ok(())
    };
    common().map_err(|e| e.context(format!("experiment {}", exp.name())))?;
    Ok(params)
}

/// Interfaces of `--switch external`.
fn external_ifaces(p: &Params) -> Result<Vec<Iface>> {
    let mut v = Vec::new();
    for (role, mac, ip) in [
        ("gen", topology::GEN_MAC, topology::GEN_IP),
        ("cap", topology::CAP_MAC, topology::CAP_IP),
    ] {
        let name: String = p.get(&format!("{role}_iface"))?;
        if name.is_empty() {
            bail!("--switch external needs --set {role}_iface=IFACE (the interface wired to the switch)");
        }
        let ns: String = p.get(&format!("{role}_netns"))?;
        v.push(Iface {
            role,
            name,
            netns: (!ns.is_empty()).then_some(ns),
            of_port: p.get(&format!("{role}_port"))?,
            switch_side: None,
            mac,
            ip,
        });
    }
    Ok(v)
}

/// Bind the controller listener inside `netns` (or here).
fn listen_in(netns: Option<&str>, addr: &str) -> Result<TcpListener> {
    let a = addr.to_string();
    crate::capture::in_ns(netns, move || {
        TcpListener::bind(&a).ctx(format!("listening on {a}"))
    })
}

/// Everything a run holds; fields drop in declaration order: the switch
/// first, then the control connection, captures and namespaces (`ctx`).
struct Running {
    switch: RunningSwitch,
    ctx: Ctx,
}

fn setup(exp: &dyn Experiment, opts: &RunOpts, params: Params, out: &Path) -> Result<Running> {
    let pin: bool = params.get("pin")?;
    if pin && switch::cores() >= 2 {
        switch::pin_self(0);
    }
    let (tx, rx) = mpsc::channel::<Event>();
    let progress = Progress::new(exp.name());
    let prefix = topology::run_prefix();
    let needs = exp.needs_switch();
    let (topo, sw, conn) = match opts.switch {
        SwitchKind::External => {
            let topo = Topology::external(external_ifaces(&params)?);
            let pid: u32 = params.get("switch_pid")?;
            let sw = switch::external((pid != 0).then_some(pid));
            let conn = if needs {
                let c: String = params.get("controller")?;
                let stream = if let Some(a) = c.strip_prefix("listen:") {
                    progress.println(&format!("waiting for the switch to connect to {a}"));
                    control::accept(&listen_in(None, a)?, Duration::from_secs(60))?
                } else if let Some(a) = c.strip_prefix("tcp:") {
                    std::net::TcpStream::connect(a)
                        .ctx(format!("connecting to the switch at {a}"))?
                } else {
                    bail!("controller={c}: expected listen:IP:PORT or tcp:IP:PORT");
                };
                Some(ControlConn::establish(stream, tx.clone())?)
            } else {
                None
            };
            (topo, sw, conn)
        }
        kind if needs => {
            let topo = Topology::build(&prefix, true)?;
            let ns = topo.switch_netns.clone();
            let listener = listen_in(ns.as_deref(), "127.0.0.1:0")?;
            let port = listener.local_addr()?.port();
            let sw = if kind == SwitchKind::Oxflow {
                switch::start_oxflow(
                    &topo,
                    port,
                    &params.get::<String>("oxflow_bin")?,
                    params.get("workers")?,
                    pin,
                    &out.join("switch.log"),
                )?
            } else {
                switch::start_ovs(&topo, port, pin, &out.join("ovs"))?
            };
            let stream = control::accept(&listener, Duration::from_secs(30))
                .map_err(|e| e.context(format!("{} (see {})", kind.as_str(), out.display())))?;
            let conn = ControlConn::establish(stream, tx.clone())?;
            (topo, sw, Some(conn))
        }
        _ => (
            Topology::build(&prefix, false)?,
            switch::external(None),
            None,
        ),
    };
    let pid = sw.pid;
    let mut ctx = Ctx::new(
        params,
        topo,
        conn,
        pid,
        opts.switch.as_str(),
        (tx, rx),
        progress,
    );
    if ctx.ctl.is_some() {
        ctx.delete_all_flows()?;
        ctx.clear_events();
    }
    Ok(Running { ctx, switch: sw })
}

fn event_loop(exp: &mut dyn Experiment, ctx: &mut Ctx) -> Result<()> {
    let max = Duration::from_secs_f64(ctx.param::<f64>("max_seconds")?);
    let start = Instant::now();
    exp.start(ctx)?;
    while !ctx.finished {
        if crate::interrupt::interrupted() {
            bail!("interrupted");
        }
        if start.elapsed() > max {
            ctx.note(format!("stopped after max_seconds={}s", max.as_secs_f64()));
            break;
        }
        if let Some(id) = ctx.due_timer() {
            exp.on_timer(ctx, id)?;
            continue;
        }
        let wait_ns = ctx
            .next_timer_ns()
            .map(|t| t.saturating_sub(now_ns()))
            .unwrap_or(100_000_000)
            .min(100_000_000);
        let deadline = Instant::now() + Duration::from_nanos(wait_ns);
        match ctx.wait_event(deadline) {
            Some(Event::Control(m, ts)) => exp.on_control(ctx, &m, ts)?,
            Some(Event::Packet(p)) => exp.on_packet(ctx, &p)?,
            Some(Event::ControlLost(why)) => bail!("control connection to the switch lost: {why}"),
            None => {}
        }
    }
    Ok(())
}

/// Run the registered experiment `opts.experiment`; returns the output
/// folder.
pub fn run(opts: &RunOpts) -> Result<PathBuf> {
    let exp = experiments::by_name(&opts.experiment)
        .ok_or_else(|| unknown_experiment(&opts.experiment))?;
    run_experiment(exp, opts)
}

/// Run `exp` (registered or not; `opts.experiment` is ignored) and write
/// its report; returns the output folder.
pub fn run_experiment(mut exp: Box<dyn Experiment>, opts: &RunOpts) -> Result<PathBuf> {
    let params = resolve_params(exp.as_ref(), opts)?;
    let out = opts.out.clone();
    std::fs::create_dir_all(&out).ctx(format!("creating {}", out.display()))?;
    let started = now_ns();
    let t0 = Instant::now();
    let mut running = setup(exp.as_ref(), opts, params, &out).map_err(|e| {
        e.context(format!(
            "setting up {} on {}",
            exp.name(),
            opts.switch.as_str()
        ))
    })?;
    let ctx = &mut running.ctx;
    let outcome = event_loop(exp.as_mut(), ctx).and_then(|_| {
        if crate::interrupt::interrupted() {
            bail!("interrupted");
        }
        exp.finish(ctx)
    });
    ctx.progress.finish();
    let mut results = outcome.map_err(|e| e.context(format!("experiment {}", exp.name())))?;
    results.notes.append(&mut ctx.notes);
    let meta = Meta {
        experiment: exp.name().into(),
        description: exp.description().into(),
        switch: if exp.needs_switch() {
            opts.switch.as_str().into()
        } else {
            "none".into()
        },
        switch_version: running.switch.version.clone(),
        switch_pid: running.switch.pid,
        params: ctx
            .params
            .values
            .iter()
            .map(|(k, (v, f))| (k.clone(), (v.clone(), f.clone())))
            .collect(),
        machine: {
            let mut m = report::machine_facts();
            let pinned = ctx.params.get::<bool>("pin").unwrap_or(false) && switch::cores() >= 2;
            m.insert(
                "pinning".into(),
                if pinned && opts.switch == SwitchKind::External {
                    "bench (generator, capture) on core 0; external switch not pinned".into()
                } else if pinned {
                    "bench (generator, capture) on core 0, switch on core 1".into()
                } else {
                    "none".into()
                },
            );
            m
        },
        started_unix_ns: started,
        duration_s: t0.elapsed().as_secs_f64(),
        topology: serde_json::to_value(&ctx.topo).unwrap_or_default(),
    };
    drop(running);
    report::write(&out, &meta, &results)?;
    Ok(out)
}
