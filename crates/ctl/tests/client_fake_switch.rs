//! `ctl` commands against an in-process fake OpenFlow 1.3 endpoint.

mod support;

use support::ctl;

use support::fake_switch::FakeSwitch;

#[test]
fn add_dump_delete_and_errors() {
    let sw = FakeSwitch::start();
    let t = sw.target();

    let (code, out, err) = ctl(&["show", &t]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "OFPT_FEATURES_REPLY (OF1.3) (xid=0x2): dpid:0000000000001234\n\
         n_tables:254, n_buffers:0\n\
         capabilities: FLOW_STATS\n\
         OFPST_PORT_DESC reply (OF1.3) (xid=0x3):\n \
         1(veth1): addr:00:00:00:00:00:01\n     \
         config:     0\n     \
         state:      0\n     \
         speed: 0 Mbps now, 0 Mbps max\n\
         OFPT_GET_CONFIG_REPLY (OF1.3) (xid=0x4): frags=normal miss_send_len=128\n"
    );

    for f in [
        "priority=10,ip,nw_dst=10.0.0.0/8,actions=output:2",
        "table=1,priority=5,tcp,tp_dst=80,actions=set_field:10.0.0.1->ip_dst,goto_table:2",
    ] {
        let (code, _, err) = ctl(&["add-flow", &t, f]);
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(sw.flows.lock().unwrap().len(), 2);

    let (code, out, err) = ctl(&["dump-flows", &t]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "OFPST_FLOW reply (OF1.3) (xid=0x2):");
    assert_eq!(
        lines[1],
        " cookie=0x0, duration=1.500s, table=0, n_packets=3, n_bytes=180, priority=10,ip,nw_dst=10.0.0.0/8 actions=output:2"
    );
    assert_eq!(
        lines[2],
        " cookie=0x0, duration=1.500s, table=1, n_packets=3, n_bytes=180, priority=5,tcp,tp_dst=80 actions=set_field:10.0.0.1->ip_dst,goto_table:2"
    );
    assert_eq!(lines.len(), 3);
    let (_, out, _) = ctl(&["--sort", "dump-flows", &t]);
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|l| l.contains("priority=5,")),
        "{out}"
    );
    let (_, out, _) = ctl(&["--rsort", "dump-flows", &t]);
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|l| l.contains("priority=10,")),
        "{out}"
    );

    // A flow the switch refuses: the OFPT_ERROR is printed, exit status 1.
    let (code, _, err) = ctl(&["add-flow", &t, "priority=666,actions=drop"]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "OFPT_ERROR: type=FLOW_MOD_FAILED code=OVERLAP (xid=0x2)\n"
    );
    // A syntax error never reaches the switch.
    let (code, _, err) = ctl(&["add-flow", &t, "tp_dst=80,actions=drop"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: field \"tp_dst\" needs tcp"),
        "{err}"
    );
    assert_eq!(sw.flows.lock().unwrap().len(), 2);

    // add-flows: comments and blank lines skipped; a bad line names the
    // file and line and nothing is sent.
    let dir = std::env::temp_dir().join(format!("ctl-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let good = dir.join("good.txt");
    std::fs::write(
        &good,
        "# flows\n\npriority=1,actions=drop\n arp,actions=FLOOD \n",
    )
    .expect("write");
    let (code, _, err) = ctl(&["add-flows", &t, good.to_str().expect("path")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(sw.flows.lock().unwrap().len(), 4);
    let bad = dir.join("bad.txt");
    std::fs::write(
        &bad,
        "priority=1,actions=drop\nip,nw_dst=1.2.3,actions=drop\n",
    )
    .expect("write");
    let (code, _, err) = ctl(&["add-flows", &t, bad.to_str().expect("path")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!(
            "{}:2: error: bad value \"1.2.3\" at column 11",
            bad.display()
        )),
        "{err}"
    );
    assert_eq!(sw.flows.lock().unwrap().len(), 4);

    let (code, _, err) = ctl(&["del-flows", &t]);
    assert_eq!(code, 0, "{err}");
    assert!(sw.flows.lock().unwrap().is_empty());

    let (code, out, _) = ctl(&["dump-flows", &t]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1);
}

#[test]
fn switch_error_is_reported() {
    let sw = FakeSwitch::start();
    let t = sw.target();
    // Build a flow-mod whose match breaks prerequisites by hand and send it
    // through the client API (the text parser would refuse it first).
    let target = ctl::client::Target::parse(&t).expect("target");
    let mut c = ctl::client::Connection::connect(&target, Some(std::time::Duration::from_secs(10)))
        .expect("connect");
    let mut spec = ctl::flow::parse_flow("actions=drop", ctl::flow::FlowUsage::Add).expect("flow");
    spec.match_ = ofp::oxm::Match::new(vec![ofp::oxm::OxmField::TcpDst(80)]);
    let fm = spec.to_flow_mod(ofp::message::flow_mod_command::ADD);
    let errors = c.send_mods(vec![ofp::Message::FlowMod(fm)]).expect("mods");
    assert_eq!(errors.len(), 1);
    assert_eq!(
        ctl::print::format_error_code(&errors[0].1),
        "type=BAD_MATCH code=BAD_PREREQ"
    );
}
