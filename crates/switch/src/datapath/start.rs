//! Starting a datapath: dealing the ports' reception over the workers,
//! building their pipeline replicas (and, with a configured graph, their
//! graphs), and spawning them.

use super::*;

impl Datapath {
    /// Deals reception over `n` workers (worker module comment): with more
    /// than one worker, every port that can split gives each worker a
    /// share; the others go whole to one worker each, round robin.
    pub(crate) fn deal_rx(ports: &SwitchPorts, n: usize) -> Vec<Vec<RxSource>> {
        let mut rx: Vec<Vec<RxSource>> = (0..n).map(|_| Vec::new()).collect();
        let mut next = 0;
        for (&no, port) in ports.iter() {
            let split = match port.io.lock() {
                Ok(mut io) if n > 1 => match io.rx_queues(n) {
                    Ok(handles) if handles.len() == n => Some(handles),
                    Ok(_) => None,
                    Err(e) => {
                        tracing::info!(port = no, "reception not split over workers: {e}");
                        None
                    }
                },
                _ => None,
            };
            match split {
                Some(handles) => {
                    for (w, h) in handles.into_iter().enumerate() {
                        if let Some(list) = rx.get_mut(w) {
                            list.push(RxSource::Own { no, rx: h });
                        }
                    }
                }
                None => {
                    if let Some(list) = rx.get_mut(next % n) {
                        list.push(RxSource::Shared { no });
                    }
                    next += 1;
                }
            }
        }
        rx
    }

    /// Starts the workers with `ports` (number, backend); reception is
    /// dealt by [`Self::deal_rx`].
    pub fn start(config: DpConfig, ports: Vec<(u32, Box<dyn Port>)>, clock: Clock) -> Datapath {
        Self::start_with_trunks(config, ports, Vec::new(), clock)
    }

    /// [`Self::start`] with trunks too: their logical ports join the port
    /// set and the workers receive from the trunks ([`trunk`]). Panics if
    /// `config.graph` is refused: use [`Self::try_start_with_trunks`].
    pub fn start_with_trunks(
        config: DpConfig,
        ports: Vec<(u32, Box<dyn Port>)>,
        trunks: Vec<trunk_start::TrunkOpen>,
        clock: Clock,
    ) -> Datapath {
        match Self::try_start_with_trunks(config, ports, trunks, clock) {
            Ok(dp) => dp,
            Err(e) => panic!("graph configuration refused: {e}"),
        }
    }

    /// [`Self::start_with_trunks`], refusing a graph configuration
    /// (`config.graph`) that does not build on every worker; the error is
    /// `FILE:LINE: reason`.
    pub fn try_start_with_trunks(
        config: DpConfig,
        mut ports: Vec<(u32, Box<dyn Port>)>,
        trunks: Vec<trunk_start::TrunkOpen>,
        clock: Clock,
    ) -> Result<Datapath, String> {
        let trunks = trunk_start::expand(trunks, &mut ports);
        let now = clock.now();
        // The flow-mod sides of the table of extensions; every replica
        // (a clone) shares them.
        let mut pipeline =
            Pipeline::default().with_extensions(super::extensions::flow_extensions());
        pipeline.groups.select_method = config.select_method;
        if config.state_capacity != stateful::DEFAULT_CAPACITY {
            pipeline.set_state_capacity(config.state_capacity);
        }
        for t in &config.table_lookups {
            pipeline::table_kinds::plug(&mut pipeline, t.table, &t.lookup)?;
            tracing::info!("table {} looks packets up with {}", t.table, t.lookup);
        }
        let mut map = BTreeMap::new();
        for (no, io) in ports {
            let state = if io.link_up() {
                ofp::port::state::LIVE
            } else {
                ofp::port::state::LINK_DOWN
            };
            pipeline.ports.insert(no, PortInfo { config: 0, state });
            let sp = SwitchPort {
                no,
                name: io.name().to_string(),
                hw_addr: io.hw_addr(),
                io: Mutex::new(io),
                added_at: now,
                rx_malformed: Default::default(),
            };
            map.insert(no, Arc::new(sp));
        }
        let ports: SwitchPorts = Arc::new(map);
        let n = config.n_workers.max(1);
        let stop = Arc::new(AtomicBool::new(false));
        let learning = LearningTable::default();
        let shared = graph::Shared::default();
        let (tx, packet_ins) = mpsc::sync_channel(PACKET_IN_QUEUE);
        let packet_in_tx = worker::PacketInSender {
            tx,
            waker: Arc::default(),
        };
        let mut dealt = trunk_start::deal_rx(&ports, &trunks, n);
        // Without a configured graph every worker runs the default one,
        // made of what it receives from (`graph_run::default_spec`); the
        // control thread's copy has every port and trunk.
        let default = config.graph.is_none();
        let names = |rx: &[RxSource]| -> (Vec<String>, Vec<String>) {
            let mut p = Vec::new();
            let mut t = Vec::new();
            for src in rx {
                match src {
                    RxSource::Trunk(tr) => t.push(tr.trunk.interface.clone()),
                    other => {
                        if let Some(sp) = ports.get(&other.port_no()) {
                            p.push(sp.name.clone());
                        }
                    }
                }
            }
            (p, t)
        };
        let spec_of = |rx: &[RxSource]| -> Arc<graph_run::GraphSpec> {
            match &config.graph {
                Some(spec) => spec.clone(),
                None => {
                    let (p, t) = names(rx);
                    Arc::new(graph_run::default_spec(
                        p.iter().map(String::as_str),
                        t.iter().map(String::as_str),
                    ))
                }
            }
        };
        let ctl_spec = match &config.graph {
            Some(spec) => spec.clone(),
            None => Arc::new(graph_run::default_spec(
                ports
                    .iter()
                    .filter(|(no, _)| !trunks.iter().any(|t| t.has_port(**no)))
                    .map(|(_, sp)| sp.name.as_str()),
                trunks.iter().map(|t| t.interface.as_str()),
            )),
        };
        // The control thread's copy first: it names a bad configuration's
        // file and line before any worker's graph is built.
        let graph_ctl = graph_control::GraphControl::new(
            ctl_spec,
            default,
            ports.clone(),
            trunks.clone(),
            packet_in_tx.clone(),
        )?;
        // The longest frame a port or trunk delivers: the graphs' buffers
        // hold it (GSO frames).
        let frame_len = ports
            .values()
            .filter_map(|p| p.io.lock().ok().map(|io| io.max_frame_len()))
            .chain(
                trunks
                    .iter()
                    .filter_map(|t| t.io.lock().ok().map(|io| io.max_frame_len())),
            )
            .max()
            .unwrap_or(packet::buf::DEFAULT_CAPACITY);
        let counters: Vec<Arc<WorkerCounters>> = (0..n).map(|_| Arc::default()).collect();
        // Every worker's graph is built before any starts, so a refused
        // configuration starts nothing.
        let mut graphs = Vec::with_capacity(n);
        for (w, c) in counters.iter().enumerate() {
            graphs.push({
                let parts = graph_openflow::OpenFlowParts {
                    pipeline: pipeline.clone(),
                    side: graph_openflow::Side {
                        mode: Mode::Pipeline,
                        events: packet_in_tx.clone(),
                        counters: c.clone(),
                        learning: learning.clone(),
                        ports: ports.clone(),
                        flex: None,
                        clock: clock.clone(),
                    },
                };
                let rx = dealt.get_mut(w).map(std::mem::take).unwrap_or_default();
                let spec = spec_of(&rx);
                let (env, fds) = graph_run::GraphRun::env(rx, &ports, &trunks, &shared, parts);
                let g = graph_run::GraphRun::build(
                    &spec,
                    default,
                    w,
                    env,
                    fds,
                    clock.clone(),
                    frame_len,
                )?;
                Box::new(g)
            });
        }
        let workers = graphs
            .into_iter()
            .zip(counters)
            .enumerate()
            .map(|(w, (graph, counters))| {
                let (tx, rx) = mpsc::sync_channel(OP_QUEUE);
                let poller = ports::Poller::new().ok();
                let waker = poller.as_ref().map(|p| p.waker());
                let worker = Worker {
                    // The replica lives in the graph's `openflow` module
                    // (`graph_run`); this one is swapped in for operations.
                    pipeline: Pipeline::default(),
                    ports: ports.clone(),
                    ops: rx,
                    counters: counters.clone(),
                    stop: stop.clone(),
                    poll_mode: config.poll,
                    poller,
                    graph,
                };
                let join = std::thread::Builder::new()
                    .name(format!("oxflow-worker-{w}"))
                    .spawn(move || worker.run())
                    .expect("spawning a worker thread");
                WorkerHandle {
                    ops: tx,
                    counters,
                    waker,
                    join,
                }
            })
            .collect();
        // The workers' replicas (cloned above) forward with the exact-match
        // index and the LPM tries; this copy serves flow-mod semantics,
        // stats and the rare packet-out, and skips those indexes' upkeep
        // per flow-mod and their memory (the control thread and the
        // workers may share a core).
        pipeline.set_lookup_indexes(false);
        let tx = TxPorts::new(&ports);
        Ok(Datapath {
            pipeline,
            ports,
            config,
            workers,
            seq: 0,
            stop,
            clock,
            mode: Mode::Pipeline,
            learning,
            packet_ins,
            packet_in_tx,
            control_counters: WorkerCounters::default(),
            buffers: BufferPool::default(),
            switch_config: ofp::message::SwitchConfig {
                flags: 0,
                miss_send_len: 128,
            },
            pending: Vec::new(),
            tx,
            bundles: bundle::Bundles::default(),
            staging: None,
            persist: None,
            rt: Default::default(),
            flex: Default::default(),
            trunks,
            beba_conns: Default::default(),
            graph_ctl,
        })
    }
}
