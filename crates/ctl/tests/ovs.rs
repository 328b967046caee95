//! `ctl` commands against a private Open vSwitch (skipped when OVS is not
//! installed: `apt-get install openvswitch-switch`). Open vSwitch's own
//! `ovs-ofctl` output is the reference for our printers.

mod support;

use support::ctl;

use std::process::Command;

use support::ovs::{available, Ovs};

fn ok(args: &[&str]) -> String {
    let (code, out, err) = ctl(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// Flow lines of a dump without durations and the xid-bearing title.
fn flow_lines(dump: &str) -> Vec<String> {
    let mut v: Vec<String> = dump
        .lines()
        .filter(|l| l.starts_with(' '))
        .map(|l| {
            l.split(", ")
                .filter(|p| !p.starts_with("duration="))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    v.sort();
    v
}

fn ovs_ofctl(args: &[&str]) -> Option<String> {
    let out = Command::new("ovs-ofctl")
        .arg("-O")
        .arg("OpenFlow13")
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn against_open_vswitch() {
    if !available() {
        eprintln!("SKIPPED: needs root and Open vSwitch (apt-get install openvswitch-switch)");
        return;
    }
    let ovs = Ovs::start().expect("start private ovs");
    let t = ovs.target();

    let show = ok(&["show", &t]);
    assert!(show.starts_with("OFPT_FEATURES_REPLY (OF1.3)"), "{show}");
    assert!(
        show.contains(&format!(" LOCAL({}): addr:", ovs.bridge)),
        "{show}"
    );

    let flows = [
        "table=0,priority=10,cookie=0x5,idle_timeout=100,send_flow_rem,tcp,in_port=LOCAL,nw_dst=10.0.0.0/8,tp_dst=80,actions=set_field:10.0.0.1->ip_dst,output:2,goto_table:1",
        "table=0,priority=20,udp,dl_src=00:00:00:00:00:01,nw_src=1.2.3.4,nw_tos=32,tp_src=53,actions=mod_nw_ttl:5,dec_ttl,CONTROLLER:100,set_queue:3",
        "table=1,hard_timeout=50,check_overlap,metadata=0x1/0xff,dl_vlan=5,dl_vlan_pcp=2,actions=pop_vlan,clear_actions,write_actions(output:3),write_metadata:0x3/0xf,goto_table:4",
        "table=3,mpls,mpls_label=5,mpls_bos=1,actions=pop_mpls:0x0800,push_mpls:0x8847,output:1",
        "table=3,vlan_tci=0x1000/0x1000,actions=strip_vlan,output:in_port",
        "table=3,arp,arp_op=1,arp_spa=10.0.0.1,actions=FLOOD",
        "table=4,priority=0,actions=drop",
    ];
    for f in flows {
        ok(&["add-flow", &t, f]);
    }
    let ours = ok(&["dump-flows", &t]);
    assert_eq!(flow_lines(&ours).len(), flows.len(), "{ours}");
    if let Some(theirs) = ovs_ofctl(&["dump-flows", &t]) {
        assert_eq!(flow_lines(&ours), flow_lines(&theirs));
    }
    // Filters.
    let t3 = ok(&["dump-flows", &t, "table=3"]);
    assert_eq!(flow_lines(&t3).len(), 3, "{t3}");
    let ck = ok(&["dump-flows", &t, "cookie=0x5/0xff"]);
    assert_eq!(flow_lines(&ck).len(), 1, "{ck}");

    // Modify, strict delete, delete by table.
    ok(&["mod-flows", &t, "table=0,tcp,tp_dst=80,actions=output:7"]);
    let d = ok(&["dump-flows", &t, "table=0,tcp"]);
    assert!(d.contains("actions=output:7"), "{d}");
    ok(&[
        "--strict",
        "del-flows",
        &t,
        "table=0,priority=20,udp,dl_src=00:00:00:00:00:01,nw_src=1.2.3.4,nw_tos=32,tp_src=53",
    ]);
    ok(&["del-flows", &t, "table=3"]);
    assert_eq!(flow_lines(&ok(&["dump-flows", &t])).len(), 3);

    // Groups and meters.
    let g = "group_id=1,type=select,bucket=weight:10,watch_port:2,actions=output:2,bucket=actions=output:3";
    ok(&["add-group", &t, g]);
    let dg = ok(&["dump-groups", &t]);
    assert_eq!(dg.lines().nth(1), Some(format!(" {g}").as_str()), "{dg}");
    if let Some(theirs) = ovs_ofctl(&["dump-groups", &t]) {
        assert_eq!(theirs.lines().nth(1), dg.lines().nth(1));
    }
    ok(&["mod-group", &t, "group_id=1,type=all,bucket=output:4"]);
    assert!(ok(&["dump-groups", &t]).contains("group_id=1,type=all,bucket=actions=output:4"));
    assert!(ok(&["dump-group-stats", &t]).contains(" group_id=1,duration="));
    ok(&[
        "add-meter",
        &t,
        "meter=1,kbps,burst,band=type=drop,rate=1000,burst_size=100",
    ]);
    let dm = ok(&["dump-meters", &t]);
    assert!(
        dm.contains("meter=1 kbps burst bands=type=drop rate=1000 burst_size=100"),
        "{dm}"
    );
    assert!(ok(&["meter-stats", &t]).contains("meter:1 flow_count:0"));
    ok(&["add-flow", &t, "table=5,actions=meter:1,group:1"]);
    ok(&["del-groups", &t]);
    ok(&["del-meters", &t]);
    assert_eq!(ok(&["dump-groups", &t]).lines().count(), 1);

    // Errors from the switch: exit 1 with the OFPT_ERROR names.
    let (code, _, err) = ctl(&["add-flow", &t, "table=6,actions=meter:9"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("OFPT_ERROR: type=METER_MOD_FAILED code=INVALID_METER"),
        "{err}"
    );
    ok(&["add-group", &t, "group_id=2,type=indirect,bucket=output:1"]);
    let (code, _, err) = ctl(&["add-group", &t, "group_id=2,type=indirect,bucket=output:1"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("OFPT_ERROR: type=GROUP_MOD_FAILED code=GROUP_EXISTS"),
        "{err}"
    );

    // Stats and descriptions.
    assert!(ok(&["dump-ports", &t]).contains("port LOCAL: rx pkts="));
    assert!(ok(&["dump-ports-desc", &t]).contains(&format!(" LOCAL({})", ovs.bridge)));
    assert!(ok(&["dump-tables", &t]).contains("  table 0:\n    active="));
    assert!(ok(&["dump-table-features", &t]).contains("  table 253"));
    assert!(ok(&["role", &t, "equal"]).contains("role=equal"));

    // Packet-out to a controller flow, seen by monitor on another connection.
    ok(&["add-flow", &t, "table=0,priority=1,actions=CONTROLLER:128"]);
    let target = t.clone();
    let mon =
        std::thread::spawn(move || ctl(&["--count=1", "--timeout=20", "monitor", &target, "128"]));
    // The monitor connection must be up before the packet is sent; the
    // packet is re-sent until the monitor has printed one message.
    let hex = "ffffffffffff000000000001080600010800060400010000000000010a000001000000000000";
    let pkt = format!("in_port=LOCAL packet={hex} actions=TABLE");
    let mut tries = 0;
    while !mon.is_finished() {
        tries += 1;
        assert!(tries < 300, "monitor saw no packet-in");
        ok(&["packet-out", &t, &pkt]);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (code, out, err) = mon.join().expect("monitor thread");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("OFPT_PACKET_IN (OF1.3)"), "{out}");
    assert!(
        out.contains("in_port=LOCAL (via action) data_len=38"),
        "{out}"
    );
    assert_eq!(out.lines().nth(1), Some(format!("packet={hex}").as_str()));
}
