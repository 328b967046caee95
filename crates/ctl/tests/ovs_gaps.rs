//! Issue 35 item 7 against a private Open vSwitch (skipped without it):
//! an add-flows file with command words and port names gives the same
//! flow table through `oxflow ctl` as through `ovs-ofctl -O OpenFlow13`.

mod support;

use std::process::Command;

use support::ovs::{available, Ovs};

fn ok(args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = ctl::commands::run(&args, &mut out, &mut err);
    let err = String::from_utf8(err).expect("utf8");
    assert_eq!(code, 0, "{args:?}: {err}");
    String::from_utf8(out).expect("utf8")
}

/// Flow lines of a dump without durations and counters.
fn flow_lines(dump: &str) -> Vec<String> {
    let mut v: Vec<String> = dump
        .lines()
        .filter(|l| l.starts_with(' '))
        .map(|l| {
            l.split(", ")
                .filter(|p| {
                    !p.starts_with("duration=")
                        && !p.starts_with("n_packets=")
                        && !p.starts_with("n_bytes=")
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn add_flows_words_and_port_names_as_ovs_ofctl() {
    if !available() {
        eprintln!("SKIPPED: needs root and Open vSwitch (apt-get install openvswitch-switch)");
        return;
    }
    let ovs = Ovs::start().expect("start private ovs");
    let t = ovs.target();
    ovs.vsctl(&[
        "add-port",
        &ovs.bridge,
        "oxp5",
        "--",
        "set",
        "Interface",
        "oxp5",
        "type=internal",
        "ofport_request=5",
    ])
    .expect("add an internal port");
    let br = &ovs.bridge;
    let file = std::env::temp_dir().join(format!("oxflow-ovs-gaps-{}.flows", std::process::id()));
    std::fs::write(
        &file,
        format!(
            "add priority=5,in_port=oxp5,actions=output:{br}\n\
             priority=6,in_port={br},ip,actions=output:oxp5\n\
             priority=7,ip,nw_dst=10.0.0.1,actions=output:oxp5\n\
             modify_strict priority=6,in_port={br},ip,actions=drop\n\
             delete_strict priority=5,in_port=oxp5\n\
             mod nw_dst=10.0.0.1,ip,actions=output:{br}\n"
        ),
    )
    .unwrap();
    let path = file.to_str().unwrap().to_string();
    ok(&["add-flows", &t, &path]);
    let ours = flow_lines(&ok(&["dump-flows", &t]));
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert!(
        ours.iter()
            .any(|l| l.contains("priority=6,ip,in_port=LOCAL actions=drop")),
        "{ours:?}"
    );
    assert!(
        ours.iter()
            .any(|l| l.contains("nw_dst=10.0.0.1 actions=LOCAL")),
        "{ours:?}"
    );
    ok(&["del-flows", &t]);
    let theirs = Command::new("ovs-ofctl")
        .args(["-O", "OpenFlow13", "add-flows", &t, &path])
        .output();
    let _ = std::fs::remove_file(&file);
    let theirs = theirs.expect("run ovs-ofctl");
    assert!(
        theirs.status.success(),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    assert_eq!(flow_lines(&ok(&["dump-flows", &t])), ours);
}
