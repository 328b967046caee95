//! The snapshot of a running datapath (in-memory ports, real worker
//! threads): what a scrape says equals what the OpenFlow statistics say.

use ofp::action::Action;
use ofp::group::{group_id, group_type, Bucket, GroupMod};
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, FlowMod, Message};
use ofp::oxm::{Match, OxmField};
use ofp::port::port_no;
use ofp::OfpMessage;
use packet::PacketBuf;
use ports::{MemPort, Port};

use super::snapshot::{ChannelView, Snapshot};
use crate::channel::hub::Hub;
use crate::datapath::{Clock, Datapath, DpConfig};

fn send(dp: &mut Datapath, body: Message) -> Vec<OfpMessage> {
    let m = OfpMessage::new(1, body);
    let raw = m.encode();
    dp.handle_message(m, &raw)
}

fn frame(len: usize) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0x88, 0xb5]);
    f.resize(len, 0);
    f
}

/// The value of the sample `name{labels}` in `text` (labels as written).
fn value(text: &str, sample: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no sample {sample} in\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn a_scrape_reports_what_the_stats_replies_say() {
    let mut ports: Vec<(u32, Box<dyn Port>)> = Vec::new();
    let mut hosts = Vec::new();
    for no in 1..=2u32 {
        let (sw, host) = MemPort::pair_named(&format!("sw\"{no}"), &format!("h{no}"), 256).unwrap();
        ports.push((no, Box::new(sw)));
        hosts.push(host);
    }
    let cfg = DpConfig {
        n_workers: 2,
        ..DpConfig::default()
    };
    let mut dp = Datapath::start(cfg, ports, Clock::real());
    // Group 5 (all, one bucket to port 2); in_port=1 -> group 5.
    let gm = GroupMod {
        command: ofp::group::command::ADD,
        group_type: group_type::ALL,
        group_id: 5,
        buckets: vec![Bucket {
            weight: 0,
            watch_port: port_no::ANY,
            watch_group: group_id::ANY,
            actions: vec![Action::Output {
                port: 2,
                max_len: 0,
            }],
        }],
    };
    assert!(send(&mut dp, Message::GroupMod(gm)).is_empty());
    let fm = FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: cmd::ADD,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 10,
        buffer_id: ofp::message::NO_BUFFER,
        out_port: port_no::ANY,
        out_group: group_id::ANY,
        flags: 0,
        match_: Match::new(vec![OxmField::InPort(1)]),
        instructions: vec![Instruction::ApplyActions(vec![Action::Group(5)])],
    };
    assert!(send(&mut dp, Message::FlowMod(fm)).is_empty());
    send(&mut dp, Message::BarrierRequest);
    let f = frame(100);
    for _ in 0..3 {
        assert_eq!(hosts[0].tx_batch(&[&f]).unwrap(), 1);
    }
    // Wait (bounded, a hang guard) until the three frames came out.
    let mut got = 0;
    let mut bufs = vec![PacketBuf::new(); 4];
    for _ in 0..20_000 {
        got += hosts[1].rx_batch(&mut bufs).unwrap();
        if got == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    assert_eq!(got, 3);

    let hub = Hub::new(dp.features());
    let view = ChannelView {
        hub: hub.clone(),
        controllers: vec![("tcp:127.0.0.1:6653".into(), 99)],
    };
    let mut snap = Snapshot {
        channel: view.sample(),
        ..Snapshot::default()
    };
    snap.read_datapath(&mut dp);
    let text = snap.render();

    // Ports: as the port stats reply, names escaped.
    assert_eq!(
        value(
            &text,
            r#"oxflow_port_rx_packets_total{port="1",name="sw\"1"}"#
        ),
        3.0
    );
    assert_eq!(
        value(
            &text,
            r#"oxflow_port_rx_bytes_total{port="1",name="sw\"1"}"#
        ),
        300.0
    );
    assert_eq!(
        value(
            &text,
            r#"oxflow_port_tx_packets_total{port="2",name="sw\"2"}"#
        ),
        3.0
    );
    assert_eq!(
        value(&text, r#"oxflow_port_up{port="1",name="sw\"1"}"#),
        1.0
    );
    // Tables: only table 0 (the others are empty and never looked up).
    assert_eq!(
        value(&text, r#"oxflow_table_lookups_total{table="0"}"#),
        3.0
    );
    assert_eq!(
        value(&text, r#"oxflow_table_matches_total{table="0"}"#),
        3.0
    );
    assert_eq!(
        value(&text, r#"oxflow_table_active_entries{table="0"}"#),
        1.0
    );
    assert!(!text.contains(r#"table="1""#));
    // Groups, folded from both workers.
    assert_eq!(
        value(&text, r#"oxflow_group_packets_total{group="5"}"#),
        3.0
    );
    assert_eq!(
        value(&text, r#"oxflow_group_bytes_total{group="5"}"#),
        300.0
    );
    assert_eq!(
        value(
            &text,
            r#"oxflow_group_bucket_packets_total{group="5",bucket="0"}"#
        ),
        3.0
    );
    assert_eq!(value(&text, r#"oxflow_group_references{group="5"}"#), 1.0);
    // Workers: one series each, receptions adding up.
    let rx: f64 = (0..2)
        .map(|w| {
            value(
                &text,
                &format!("oxflow_worker_rx_packets_total{{worker=\"{w}\"}}"),
            )
        })
        .sum();
    assert_eq!(rx, 3.0);
    // The channel: the configured controller is not connected.
    assert_eq!(
        value(
            &text,
            r#"oxflow_controller_connected{target="tcp:127.0.0.1:6653"}"#
        ),
        0.0
    );
    assert_eq!(
        value(
            &text,
            r#"oxflow_controller_role{target="tcp:127.0.0.1:6653",role="master"}"#
        ),
        0.0
    );
    assert_eq!(value(&text, "oxflow_up"), 1.0);
    // Every family once, each with HELP then TYPE.
    let mut seen = std::collections::HashSet::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = l.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            assert!(seen.insert(name.to_string()), "{name} twice");
            assert!(lines[i + 1].starts_with(&format!("# TYPE {name} ")));
            assert!(name.starts_with("oxflow_"));
            if lines[i + 1].ends_with(" counter") {
                assert!(name.ends_with("_total"), "{name}");
            }
        }
    }
    // docs/metrics.md lists exactly the families rendered.
    let doc = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/metrics.md"
    ));
    let documented: std::collections::HashSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `oxflow_")?.split('`').next())
        .map(|n| format!("oxflow_{n}"))
        .collect();
    assert_eq!(
        documented, seen,
        "docs/metrics.md and the rendered families differ"
    );
    dp.shutdown();
    drop(hub);
}
