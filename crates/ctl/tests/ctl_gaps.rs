//! Issue 35 item 7 against the in-process fake endpoint: port names,
//! add-flows command words, monitor arguments.

mod support;

use support::ctl;

use ofp::action::Action;
use ofp::instruction::Instruction;
use ofp::message::flow_mod_command;
use ofp::oxm::OxmField;
use support::fake_switch::FakeSwitch;

#[test]
fn port_names_are_looked_up_in_the_port_descriptions() {
    let sw = FakeSwitch::start();
    let t = sw.target();
    // The fake switch's port 1 is "veth1".
    let (code, _, err) = ctl(&["add-flow", &t, "in_port=veth1,actions=output:veth1"]);
    assert_eq!(code, 0, "{err}");
    let flows = sw.flows.lock().unwrap().clone();
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0].match_.fields, vec![OxmField::InPort(1)]);
    assert_eq!(
        flows[0].instructions,
        vec![Instruction::ApplyActions(vec![Action::Output {
            port: 1,
            max_len: 0
        }])]
    );
    // A name the switch does not have: the syntax error, pointing at it.
    let (code, _, err) = ctl(&["add-flow", &t, "in_port=veth9,actions=drop"]);
    assert_eq!(code, 1);
    assert!(err.contains("veth9"), "{err}");
}

#[test]
fn add_flows_lines_with_command_words() {
    let sw = FakeSwitch::start();
    let t = sw.target();
    let path = std::env::temp_dir().join(format!("oxflow-ctl-gaps-{}.flows", std::process::id()));
    std::fs::write(
        &path,
        "priority=1,actions=drop\n\
         add priority=2,ip,actions=drop\n\
         # the fake switch clears its list on a delete\n\
         delete\n\
         add priority=3,in_port=veth1,actions=drop\n\
         modify_strict priority=3,in_port=1,actions=output:2\n",
    )
    .unwrap();
    let (code, _, err) = ctl(&["add-flows", &t, path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{err}");
    let flows = sw.flows.lock().unwrap().clone();
    assert_eq!(flows.len(), 1, "{flows:?}");
    assert_eq!(flows[0].priority, 3);
    assert_eq!(flows[0].command, flow_mod_command::ADD);
    assert_eq!(flows[0].match_.fields, vec![OxmField::InPort(1)]);
}

#[test]
fn monitor_arguments_are_checked_before_connecting() {
    let (code, _, err) = ctl(&["monitor", "unix:/nonexistent", "watch:"]);
    assert_eq!(code, 1);
    assert!(err.contains("OpenFlow 1.4"), "{err}");
    let (code, _, err) = ctl(&["monitor", "unix:/nonexistent", "128", "bogus"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown argument \"bogus\""), "{err}");
}
