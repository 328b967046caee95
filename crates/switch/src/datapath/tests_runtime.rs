//! Run-time port and queue requests (`ports_runtime`, `admin`): in-memory
//! ports, real worker threads.

use super::*;
use ofp::message::{flow_mod_command as cmd, port_reason, Message};
use ofp::multipart::MultipartRequestBody as Q;
use ofp::multipart::{Multipart, MultipartReplyBody as R};
use ofp::oxm::OxmField;
use ofp::port_admin::{self, PortAdmin};
use ofp::OfpMessage;
use packet::PacketBuf;
use ports::MemPort;

/// A switch with ports 1 and 2 and an opener that can open "sw3" (the
/// host end is in the slot's second half) and nothing else.
fn rig(workers: usize) -> (Datapath, Vec<MemPort>, Arc<Mutex<Vec<MemPort>>>) {
    let mut hosts = Vec::new();
    let mut ports: Vec<(u32, Box<dyn Port>)> = Vec::new();
    for no in 1..=2u32 {
        let (sw, host) = MemPort::pair_named(&format!("sw{no}"), &format!("h{no}"), 256).unwrap();
        ports.push((no, Box::new(sw)));
        hosts.push(host);
    }
    let cfg = DpConfig {
        n_workers: workers,
        ..DpConfig::default()
    };
    let mut dp = Datapath::start(cfg, ports, Clock::real());
    let spare: Arc<Mutex<Vec<MemPort>>> = Arc::default();
    let slot = spare.clone();
    dp.set_port_opener(Box::new(move |name: &str| {
        if name != "sw3" {
            return Err("no such network interface".into());
        }
        let (sw, host) = MemPort::pair_named("sw3", "h3", 256).map_err(|e| e.to_string())?;
        slot.lock().unwrap().push(host);
        Ok(Box::new(sw) as Box<dyn Port>)
    }));
    (dp, hosts, spare)
}

fn admin(dp: &mut Datapath, req: PortAdmin) -> Result<Option<u32>, String> {
    let m = OfpMessage::new(
        9,
        Message::MultipartRequest(Multipart::new(Q::Experimenter(req.request()))),
    );
    let raw = m.encode();
    match dp.handle_message(m, &raw).as_slice() {
        [OfpMessage {
            body: Message::MultipartReply(r),
            ..
        }] => match &r.body {
            R::Experimenter(e) => Ok(port_admin::reply_port(e)),
            other => panic!("unexpected reply {other:?}"),
        },
        [OfpMessage {
            body: Message::Error(e),
            ..
        }] => Err(port_admin::refusal_text(e).expect("an oxflow refusal")),
        r => panic!("unexpected answer {r:?}"),
    }
}

fn port_status(dp: &mut Datapath) -> Vec<(u8, u32, String)> {
    dp.take_events()
        .into_iter()
        .filter_map(|e| match e {
            DpEvent::PortStatus(p) => Some((p.reason, p.desc.port_no, p.desc.name)),
            _ => None,
        })
        .collect()
}

fn recv(host: &mut MemPort) -> Vec<u8> {
    let mut bufs = vec![PacketBuf::new(); 1];
    for _ in 0..20_000 {
        if host.rx_batch(&mut bufs).unwrap() == 1 {
            return bufs[0].data().to_vec();
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    panic!("no frame");
}

fn flow_1_to(dp: &mut Datapath, out: u32) {
    flow(dp, 1, out);
}

fn flow(dp: &mut Datapath, from: u32, out: u32) {
    let fm = super::tests::fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(from)],
        vec![super::tests::out(out)],
    );
    let m = OfpMessage::new(3, Message::FlowMod(fm));
    let raw = m.encode();
    assert!(dp.handle_message(m, &raw).is_empty());
}

#[test]
fn ports_added_and_removed_at_run_time() {
    for workers in [1, 2] {
        let (mut dp, mut hosts, spare) = rig(workers);
        let add = |name: &str| PortAdmin::AddPort {
            port_no: 0,
            interface: name.into(),
        };
        // Unknown interface: refused with the reason, nothing changes.
        let e = admin(&mut dp, add("nope0")).unwrap_err();
        assert_eq!(e, "interface \"nope0\": no such network interface");
        let e = admin(&mut dp, add("sw1")).unwrap_err();
        assert_eq!(e, "interface \"sw1\" is already port 1");
        assert!(port_status(&mut dp).is_empty());

        assert_eq!(admin(&mut dp, add("sw3")), Ok(Some(3)));
        assert_eq!(
            port_status(&mut dp),
            vec![(port_reason::ADD, 3, "sw3".into())]
        );
        let mut h3 = spare.lock().unwrap().pop().unwrap();
        // Traffic through the new port, both ways.
        flow_1_to(&mut dp, 3);
        dp.barrier();
        let f = vec![0xffu8; 60];
        hosts[0].tx_batch(&[&f]).unwrap();
        assert_eq!(recv(&mut h3), f);
        // The default graph received from it at once: its `port_inc`
        // was added with it.
        flow(&mut dp, 3, 1);
        dp.barrier();
        h3.tx_batch(&[&f]).unwrap();
        assert_eq!(recv(&mut hosts[0]), f);
        let inputs = |dp: &mut Datapath| -> Vec<String> {
            let g = dp.graph_view();
            let mut v: Vec<String> = g
                .nodes
                .iter()
                .filter(|n| n.kind == "port_inc")
                .map(|n| n.name.clone())
                .collect();
            v.sort();
            v
        };
        assert_eq!(inputs(&mut dp), ["in_sw1", "in_sw2", "in_sw3"]);

        let del = PortAdmin::DelPort {
            port_no: 0,
            name: "sw3".into(),
        };
        assert_eq!(admin(&mut dp, del.clone()), Ok(Some(3)));
        assert_eq!(
            port_status(&mut dp),
            vec![(port_reason::DELETE, 3, "sw3".into())]
        );
        assert_eq!(admin(&mut dp, del).unwrap_err(), "no port named \"sw3\"");
        assert_eq!(inputs(&mut dp), ["in_sw1", "in_sw2"], "its port_inc went");
        // Its flow stays (a port deletion changes no flow table) and
        // outputs nothing now.
        let flows: usize = dp.pipeline.tables().iter().map(|t| t.len()).sum();
        assert_eq!(flows, 2);
        hosts[0].tx_batch(&[&f]).unwrap();
        dp.barrier();
        // Numbers are not reused: the interface comes back as port 4.
        assert_eq!(admin(&mut dp, add("sw3")), Ok(Some(4)));
        // An explicit number in use is refused.
        let e = admin(
            &mut dp,
            PortAdmin::AddPort {
                port_no: 2,
                interface: "sw9".into(),
            },
        )
        .unwrap_err();
        assert_eq!(e, "port number 2 is in use");
        dp.shutdown();
    }
}

#[test]
fn queues_on_memory_ports_are_refused_with_the_reason() {
    let (mut dp, _hosts, _spare) = rig(1);
    let set = PortAdmin::SetQueue {
        port_no: 1,
        queue_id: 1,
        min_rate: 0,
        max_rate: 20_000_000,
    };
    let e = admin(&mut dp, set).unwrap_err();
    assert!(
        e.starts_with("port 1 (sw1): queue 1: sw1:"),
        "the reason names port and queue: {e}"
    );
    let set = PortAdmin::SetQueue {
        port_no: 1,
        queue_id: 1,
        min_rate: 0,
        max_rate: 20_000_000_000_000,
    };
    let e = admin(&mut dp, set).unwrap_err();
    assert!(
        e.contains("max_rate 20000G is above the port's speed"),
        "{e}"
    );
    let e = admin(
        &mut dp,
        PortAdmin::DelQueue {
            port_no: 1,
            queue_id: 4,
        },
    )
    .unwrap_err();
    assert_eq!(e, "port 1 has no queue 4");
    let e = admin(
        &mut dp,
        PortAdmin::DelQueue {
            port_no: 9,
            queue_id: 1,
        },
    )
    .unwrap_err();
    assert_eq!(e, "no port 9");
    // Statistics of a queue the port does not have: BAD_QUEUE.
    let m = OfpMessage::new(
        4,
        Message::MultipartRequest(Multipart::new(Q::Queue {
            port_no: 1,
            queue_id: 5,
        })),
    );
    let raw = m.encode();
    match dp.handle_message(m, &raw).as_slice() {
        [OfpMessage {
            body: Message::Error(e),
            ..
        }] => assert_eq!(
            e.typed(),
            Some(ofp::error::ErrorCode::QueueOpFailed(
                ofp::error::QueueOpFailedCode::BadQueue
            ))
        ),
        r => panic!("expected BAD_QUEUE, got {r:?}"),
    }
    // Nothing was configured: no queues reported, set_queue:1 refused.
    assert!(dp.queue_config(ofp::port::port_no::ANY).queues.is_empty());
    assert!(!dp.pipeline.queue_ids.contains(&1));
    dp.shutdown();
}
