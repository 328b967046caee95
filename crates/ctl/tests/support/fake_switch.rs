//! A minimal in-process OpenFlow 1.3 endpoint for client tests.
//!
//! It accepts connections on 127.0.0.1 one after another (each `ctl`
//! command opens its own), negotiates with HELLO, and keeps a flow list:
//! FLOW_MOD add appends (or answers BAD_MATCH/BAD_PREREQ like a switch
//! would), delete clears; flow-stats replies are split into one message per
//! flow with REPLY_MORE so that reply assembly is exercised; an ECHO_REQUEST
//! precedes every multipart reply to check that the client answers it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use ofp::error::{ErrorCode, ErrorMsg, FlowModFailedCode};
use ofp::header::frame_len;
use ofp::message::SwitchConfig;
use ofp::message::{flow_mod_command, Echo, FeaturesReply, Hello, Message};
use ofp::multipart::{
    FlowStats, MultipartReply, MultipartReplyBody, MultipartRequestBody, OFPMPF_REPLY_MORE,
};
use ofp::port::Port;
use ofp::OfpMessage;

pub struct FakeSwitch {
    pub port: u16,
    pub flows: Arc<Mutex<Vec<ofp::message::FlowMod>>>,
    _thread: JoinHandle<()>,
}

fn read_msg(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<OfpMessage> {
    loop {
        if let Ok(Some(len)) = frame_len(buf) {
            let frame: Vec<u8> = buf.drain(..len).collect();
            return OfpMessage::decode(&frame).ok();
        }
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn send(s: &mut TcpStream, xid: u32, body: Message) {
    let _ = s.write_all(&OfpMessage::new(xid, body).encode());
}

fn serve(mut s: TcpStream, flows: &Mutex<Vec<ofp::message::FlowMod>>) {
    let mut buf = Vec::new();
    send(&mut s, 1000, Message::Hello(Hello::ofp13()));
    while let Some(m) = read_msg(&mut s, &mut buf) {
        match m.body {
            Message::FeaturesRequest => send(
                &mut s,
                m.xid,
                Message::FeaturesReply(FeaturesReply {
                    datapath_id: 0x1234,
                    n_buffers: 0,
                    n_tables: 254,
                    auxiliary_id: 0,
                    capabilities: 1,
                    reserved: 0,
                }),
            ),
            Message::FlowMod(fm) => {
                if let Err(e) = fm.match_.check_prerequisites() {
                    send(
                        &mut s,
                        m.xid,
                        Message::Error(ErrorMsg::from_request(e.code, &[])),
                    );
                    continue;
                }
                // Priority 666 stands for "the switch refuses this flow".
                if fm.priority == 666 {
                    let code = ErrorCode::FlowModFailed(FlowModFailedCode::Overlap);
                    send(
                        &mut s,
                        m.xid,
                        Message::Error(ErrorMsg::from_request(code, &[])),
                    );
                    continue;
                }
                let mut f = flows.lock().unwrap();
                match fm.command {
                    flow_mod_command::ADD => f.push(fm),
                    flow_mod_command::DELETE => f.clear(),
                    _ => {}
                }
            }
            Message::GetConfigRequest => send(
                &mut s,
                m.xid,
                Message::GetConfigReply(SwitchConfig {
                    flags: 0,
                    miss_send_len: 128,
                }),
            ),
            Message::BarrierRequest => send(&mut s, m.xid, Message::BarrierReply),
            Message::MultipartRequest(req) => {
                send(&mut s, 7777, Message::EchoRequest(Echo { data: vec![1] }));
                if let MultipartRequestBody::PortDesc = req.body {
                    let port = Port {
                        port_no: 1,
                        hw_addr: [0, 0, 0, 0, 0, 1],
                        name: "veth1".into(),
                        ..Port::default()
                    };
                    send(
                        &mut s,
                        m.xid,
                        Message::MultipartReply(MultipartReply::new(MultipartReplyBody::PortDesc(
                            vec![port],
                        ))),
                    );
                }
                if let MultipartRequestBody::Flow(_) = req.body {
                    let stats: Vec<FlowStats> = flows
                        .lock()
                        .unwrap()
                        .iter()
                        .map(|fm| FlowStats {
                            table_id: fm.table_id,
                            duration_sec: 1,
                            duration_nsec: 500_000_000,
                            priority: fm.priority,
                            idle_timeout: fm.idle_timeout,
                            hard_timeout: fm.hard_timeout,
                            flags: fm.flags,
                            cookie: fm.cookie,
                            packet_count: 3,
                            byte_count: 180,
                            match_: fm.match_.clone(),
                            instructions: fm.instructions.clone(),
                        })
                        .collect();
                    let n = stats.len();
                    if n == 0 {
                        send(
                            &mut s,
                            m.xid,
                            Message::MultipartReply(MultipartReply::new(MultipartReplyBody::Flow(
                                vec![],
                            ))),
                        );
                    }
                    for (i, st) in stats.into_iter().enumerate() {
                        let mut r = MultipartReply::new(MultipartReplyBody::Flow(vec![st]));
                        if i + 1 < n {
                            r.flags = OFPMPF_REPLY_MORE;
                        }
                        send(&mut s, m.xid, Message::MultipartReply(r));
                    }
                }
            }
            _ => {}
        }
    }
}

impl FakeSwitch {
    pub fn start() -> FakeSwitch {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let flows = Arc::new(Mutex::new(Vec::new()));
        let f2 = flows.clone();
        let thread = std::thread::spawn(move || {
            for s in l.incoming() {
                match s {
                    Ok(s) => serve(s, &f2),
                    Err(_) => return,
                }
            }
        });
        FakeSwitch {
            port,
            flows,
            _thread: thread,
        }
    }

    pub fn target(&self) -> String {
        format!("tcp:127.0.0.1:{}", self.port)
    }
}
