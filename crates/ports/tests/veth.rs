//! AF_PACKET, tap and netlink tests on veth pairs inside a private network
//! namespace (needs root, `ip` from iproute2). Each test makes its own
//! namespace `oxp-<pid>-<n>`, removed by a Drop guard even on failure
//! (deleting a namespace deletes the veths in it).
//!
//! Test frames use the local-experimental ethertype 0x88b5 so that other
//! traffic on the links (IPv6 router solicitations etc.) is ignored.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ports::netns::in_netns;
use ports::{
    AfPacket, AfPacketOpts, LinkEvent, LinkMonitor, PacketBuf, Port, TapPort, XdpMode, XdpOpts,
    XdpPort, BATCH,
};

const TEST_TYPE: [u8; 2] = [0x88, 0xb5];
/// Deadline for something to arrive (a failure bound, not a speed check).
const WAIT: Duration = Duration::from_secs(5);

struct Netns {
    name: String,
}

impl Netns {
    fn new() -> Netns {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "oxp-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run(&["ip", "netns", "add", &name]);
        let ns = Netns { name };
        // Less noise on the links; failure to set is harmless (we filter).
        let _ = in_netns(&ns.name, || {
            for k in ["all", "default"] {
                let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{k}/disable_ipv6"), "1");
            }
        });
        ns
    }

    fn ip(&self, args: &[&str]) {
        let mut v = vec!["ip", "-n", &self.name];
        v.extend_from_slice(args);
        run(&v);
    }

    /// A veth pair `a`/`b`, both up.
    fn veth(&self, a: &str, b: &str) {
        self.ip(&["link", "add", a, "type", "veth", "peer", "name", b]);
        self.ip(&["link", "set", a, "up"]);
        self.ip(&["link", "set", b, "up"]);
    }

    fn open_xdp(&self, ifname: &str, opts: XdpOpts) -> std::io::Result<XdpPort> {
        let n = ifname.to_string();
        in_netns(&self.name, move || XdpPort::open(&n, &opts)).expect("enter netns")
    }

    fn open(&self, ifname: &str, opts: AfPacketOpts) -> AfPacket {
        let n = ifname.to_string();
        in_netns(&self.name, move || AfPacket::open(&n, &opts))
            .expect("enter netns")
            .expect("open AfPacket")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

fn run(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("spawn");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_readable(fd: i32, ms: i32) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut pfd, 1, ms) };
}

/// Is this one of our test frames (possibly behind VLAN tags)?
fn is_test_frame(f: &[u8]) -> bool {
    let mut off = 12;
    while f.len() >= off + 2 {
        match [f[off], f[off + 1]] {
            [0x81, 0x00] | [0x88, 0xa8] => off += 4,
            t => return t == TEST_TYPE,
        }
    }
    false
}

/// Receives test frames until `n` arrived (or the deadline passed).
fn recv_n(port: &mut impl Port, n: usize) -> Vec<Vec<u8>> {
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let mut got = Vec::new();
    let start = Instant::now();
    while got.len() < n && start.elapsed() < WAIT {
        wait_readable(port.fd().unwrap(), 50);
        let k = port.rx_batch(&mut bufs).unwrap();
        assert!(k <= BATCH);
        got.extend(
            bufs[..k]
                .iter()
                .map(|b| b.data().to_vec())
                .filter(|f| is_test_frame(f)),
        );
    }
    got
}

/// Drains whatever is waiting (after a short settle) and returns the test
/// frames among it.
fn drain(port: &mut impl Port) -> Vec<Vec<u8>> {
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let mut got = Vec::new();
    std::thread::sleep(Duration::from_millis(50));
    loop {
        let k = port.rx_batch(&mut bufs).unwrap();
        if k == 0 {
            break;
        }
        got.extend(
            bufs[..k]
                .iter()
                .map(|b| b.data().to_vec())
                .filter(|f| is_test_frame(f)),
        );
    }
    got
}

/// Test frame `i` of `len` bytes from `src`: broadcast dst, ethertype
/// 0x88b5, then a sequence number and a pattern.
fn frame(src: u8, i: u16, len: usize) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, src]);
    f.extend_from_slice(&TEST_TYPE);
    f.extend_from_slice(&i.to_be_bytes());
    let mut x = i as u8;
    while f.len() < len {
        f.push(x);
        x = x.wrapping_mul(31).wrapping_add(7);
    }
    f
}

#[test]
fn byte_exact_both_directions_in_batches_larger_than_32() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let mut a = ns.open("va", AfPacketOpts::default());
    let mut b = ns.open("vb", AfPacketOpts::default());
    // A second socket on `va` (as another worker's would be): the kernel
    // shows it what `a` transmits as outgoing frames, which must be hidden.
    let mut a2 = ns.open("va", AfPacketOpts::default());

    let sizes = [60, 64, 128, 333, 1000, 1514];
    let ab: Vec<Vec<u8>> = (0..100)
        .map(|i| frame(1, i, sizes[i as usize % sizes.len()]))
        .collect();
    let refs: Vec<&[u8]> = ab.iter().map(|f| f.as_slice()).collect();
    assert_eq!(a.tx_batch(&refs).unwrap(), 100);
    assert_eq!(recv_n(&mut b, 100), ab);

    let ba: Vec<Vec<u8>> = (0..40).map(|i| frame(2, i, 60 + i as usize)).collect();
    let refs: Vec<&[u8]> = ba.iter().map(|f| f.as_slice()).collect();
    assert_eq!(b.tx_batch(&refs).unwrap(), 40);
    // `a` gets exactly b's frames: none of its own 100 transmissions.
    assert_eq!(recv_n(&mut a, 40), ba);
    assert!(drain(&mut a).is_empty());
    assert_eq!(recv_n(&mut a2, 40), ba);
    assert!(drain(&mut a2).is_empty());
    assert!(drain(&mut b).is_empty());

    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!(sa.tx_packets, 100);
    assert_eq!(sa.tx_bytes, ab.iter().map(|f| f.len() as u64).sum::<u64>());
    assert!(sb.rx_packets >= 100);
    assert_eq!(sb.rx_dropped, 0);
}

#[test]
fn vlan_tags_arrive_as_on_the_wire() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let mut a = ns.open("va", AfPacketOpts::default());
    let mut b = ns.open("vb", AfPacketOpts::default());

    let plain = frame(1, 1, 60);
    let tag = |tpid: [u8; 2], tci: u16, f: &[u8]| {
        let mut v = f[..12].to_vec();
        v.extend_from_slice(&tpid);
        v.extend_from_slice(&tci.to_be_bytes());
        v.extend_from_slice(&f[12..]);
        v
    };
    // 802.1Q vid 100 pcp 3; priority-tagged (vid 0); QinQ 802.1ad over 802.1Q.
    let q = tag([0x81, 0x00], (3 << 13) | 100, &plain);
    let prio = tag([0x81, 0x00], 5 << 13, &frame(1, 2, 60));
    let qinq = tag([0x88, 0xa8], 200, &tag([0x81, 0x00], 10, &frame(1, 3, 80)));
    let sent = vec![q, prio, qinq];
    let refs: Vec<&[u8]> = sent.iter().map(|f| f.as_slice()).collect();
    assert_eq!(a.tx_batch(&refs).unwrap(), 3);
    assert_eq!(recv_n(&mut b, 3), sent);
    // And the other way.
    assert_eq!(b.tx_batch(&refs).unwrap(), 3);
    assert_eq!(recv_n(&mut a, 3), sent);
}

#[test]
fn hw_addr_mtu_and_fanout_group() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    ns.ip(&["link", "set", "vb", "address", "02:11:22:33:44:55"]);
    ns.ip(&["link", "set", "vb", "mtu", "1400"]);
    let mut a = ns.open("va", AfPacketOpts::default());
    let opts = AfPacketOpts {
        fanout: Some(7),
        ..AfPacketOpts::default()
    };
    let mut b1 = ns.open("vb", opts.clone());
    let mut b2 = ns.open("vb", opts);
    assert_eq!(b1.hw_addr(), [0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
    assert_eq!(b1.mtu().unwrap(), 1400);
    assert_eq!(b1.name(), "vb");

    // Different source MACs hash to members; together they see every frame
    // exactly once.
    let sent: Vec<Vec<u8>> = (0..64).map(|i| frame(i as u8, i, 60)).collect();
    let refs: Vec<&[u8]> = sent.iter().map(|f| f.as_slice()).collect();
    assert_eq!(a.tx_batch(&refs).unwrap(), 64);
    let mut got = Vec::new();
    let start = Instant::now();
    while got.len() < 64 && start.elapsed() < WAIT {
        got.extend(drain(&mut b1));
        got.extend(drain(&mut b2));
    }
    got.sort();
    let mut want = sent.clone();
    want.sort();
    assert_eq!(got, want);
}

fn wait_event(mon: &mut LinkMonitor, name: &str, up: bool) -> LinkEvent {
    let start = Instant::now();
    let mut evs = Vec::new();
    while start.elapsed() < WAIT {
        wait_readable(mon.fd(), 50);
        evs.clear();
        mon.read_events(&mut evs).unwrap();
        if let Some(e) = evs.iter().find(|e| e.name == name && e.up == up) {
            return e.clone();
        }
    }
    panic!("no link event {name} up={up}");
}

#[test]
fn link_down_and_up_seen_by_monitor_and_port() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let mut mon = in_netns(&ns.name, LinkMonitor::open).unwrap().unwrap();
    let a = ns.open("va", AfPacketOpts::default());

    mon.request_dump().unwrap();
    let e = wait_event(&mut mon, "va", true);
    assert_eq!(e.ifindex, a.ifindex());
    // The dump may report the link before its carrier is on: wait for it.
    let start = Instant::now();
    while !a.link_up() && start.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(a.link_up());

    // Peer down: va loses carrier.
    ns.ip(&["link", "set", "vb", "down"]);
    wait_event(&mut mon, "va", false);
    assert!(!a.link_up());
    ns.ip(&["link", "set", "vb", "up"]);
    wait_event(&mut mon, "va", true);
    assert!(a.link_up());
    assert!(a.take_socket_error().is_none());
    // Admin down on va itself.
    ns.ip(&["link", "set", "va", "down"]);
    wait_event(&mut mon, "va", false);
    assert!(!a.link_up());
    // Removal is reported as a deleted link.
    ns.ip(&["link", "del", "va"]);
    let start = Instant::now();
    let mut evs = Vec::new();
    while !evs.iter().any(|e: &LinkEvent| e.name == "va" && e.deleted) {
        assert!(start.elapsed() < WAIT, "no RTM_DELLINK for va");
        wait_readable(mon.fd(), 50);
        mon.read_events(&mut evs).unwrap();
    }
}

#[test]
fn tap_port_exchanges_frames_with_the_kernel() {
    let ns = Netns::new();
    let mut tap = in_netns(&ns.name, || TapPort::create("oxtap0"))
        .unwrap()
        .unwrap();
    // An AF_PACKET socket on the tap interface is the "kernel side".
    let mut k = ns.open("oxtap0", AfPacketOpts::default());
    assert!(tap.link_up());
    assert_eq!(tap.mtu().unwrap(), 1500);
    assert_eq!(tap.hw_addr(), k.hw_addr());

    let to_kernel: Vec<Vec<u8>> = (0..40).map(|i| frame(1, i, 60 + i as usize)).collect();
    let refs: Vec<&[u8]> = to_kernel.iter().map(|f| f.as_slice()).collect();
    assert_eq!(tap.tx_batch(&refs).unwrap(), 40);
    assert_eq!(recv_n(&mut k, 40), to_kernel);

    let from_kernel: Vec<Vec<u8>> = (0..40).map(|i| frame(2, i, 100)).collect();
    let refs: Vec<&[u8]> = from_kernel.iter().map(|f| f.as_slice()).collect();
    assert_eq!(k.tx_batch(&refs).unwrap(), 40);
    assert_eq!(recv_n(&mut tap, 40), from_kernel);

    // A transmit clone from another thread, counted on the port.
    let mut tx = tap.tx_clone().unwrap();
    let f = frame(3, 0, 80);
    let f2 = f.clone();
    std::thread::spawn(move || assert_eq!(tx.tx_batch(&[&f2]).unwrap(), 1))
        .join()
        .unwrap();
    assert_eq!(recv_n(&mut k, 1), vec![f]);
    assert_eq!(tap.stats().tx_packets, 41);
}

#[test]
fn tx_clones_send_from_other_threads_and_count_on_the_port() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let a = ns.open("va", AfPacketOpts::default());
    let mut b = ns.open("vb", AfPacketOpts::default());
    // Two clones used from two threads at once (no lock), then dropped
    // before the port: the port's socket must outlive them either way.
    let sent: Vec<Vec<u8>> = (0..2u8)
        .map(|t| {
            let mut tx = a.tx_clone().unwrap();
            std::thread::spawn(move || {
                let frames: Vec<Vec<u8>> = (0..50).map(|i| frame(10 + t, i, 100)).collect();
                let refs: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
                assert_eq!(tx.tx_batch(&refs).unwrap(), 50);
                frames
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let mut got = recv_n(&mut b, 100);
    assert_eq!(got.len(), 100);
    // Each thread's frames arrive in its order; the interleaving is free.
    for src in [10u8, 11] {
        let mine: Vec<&Vec<u8>> = got.iter().filter(|f| f[11] == src).collect();
        let want: Vec<&Vec<u8>> = sent.iter().filter(|f| f[11] == src).collect();
        assert_eq!(mine, want);
    }
    got.clear();
    assert_eq!(a.stats().tx_packets, 100);
    assert_eq!(a.stats().tx_bytes, 100 * 100);
}

#[test]
fn first_frame_after_link_down_up_is_sent() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let mut a = ns.open("va", AfPacketOpts::default());
    let mut b = ns.open("vb", AfPacketOpts::default());
    ns.ip(&["link", "set", "va", "down"]);
    // While down: dropped and counted.
    assert_eq!(a.tx_batch(&[&frame(1, 0, 60)]).unwrap(), 0);
    ns.ip(&["link", "set", "va", "up"]);
    let start = Instant::now();
    while !a.link_up() && start.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(5));
    }
    let f = frame(1, 1, 60);
    assert_eq!(a.tx_batch(&[&f]).unwrap(), 1, "stats {:?}", a.stats());
    assert_eq!(recv_n(&mut b, 1), vec![f]);
}

#[test]
fn link_down_error_wakes_a_poller_once_take_error_clears_it() {
    use ports::poll::Poller;
    let ns = Netns::new();
    ns.veth("va", "vb");
    let a = ns.open("va", AfPacketOpts::default());
    let mut p = Poller::new().unwrap();
    p.add(a.fd().unwrap(), 1).unwrap();
    assert!(p.wait(Some(Duration::ZERO)).unwrap().is_empty());
    ns.ip(&["link", "set", "va", "down"]);
    // The kernel leaves ENETDOWN on the socket: the poller wakes with an
    // error event (bounded wait: a hang guard only).
    let ev = p.wait(Some(WAIT)).unwrap();
    assert!(ev.iter().any(|e| e.token == 1 && e.error), "{ev:?}");
    let err = a.take_error().expect("pending socket error");
    assert_eq!(err.raw_os_error(), Some(libc::ENETDOWN));
    // Read: the descriptor no longer polls ready, so a worker can block.
    assert!(p.wait(Some(Duration::ZERO)).unwrap().is_empty());
}

/// An IPv4/UDP frame of flow `flow` (its UDP source port) carrying
/// sequence number `seq` after the marker "OXPQ".
fn udp_frame(flow: u16, seq: u16) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let payload_len = 8 + 8;
    let total = (20 + payload_len) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0,
        0,
        64,
        17,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend_from_slice(&(1000 + flow).to_be_bytes());
    f.extend_from_slice(&[0x13, 0x88, 0, payload_len as u8, 0, 0]);
    f.extend_from_slice(b"OXPQ");
    f.extend_from_slice(&flow.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f
}

/// (flow, seq) of a frame made by `udp_frame`.
fn udp_marker(f: &[u8]) -> Option<(u16, u16)> {
    (f.len() >= 50 && &f[42..46] == b"OXPQ").then(|| {
        (
            u16::from_be_bytes([f[46], f[47]]),
            u16::from_be_bytes([f[48], f[49]]),
        )
    })
}

#[test]
fn rx_queues_spread_flows_over_handles_each_frame_once() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let mut a = ns.open("va", AfPacketOpts::default());
    let mut b = ns.open("vb", AfPacketOpts::default());
    // This thread is not in the namespace: the new member sockets must be
    // opened in the port's namespace all the same.
    let mut qs = b.rx_queues(3).unwrap();
    assert_eq!(qs.len(), 3);
    assert!(b.rx_queues(2).is_err(), "reception can be split only once");

    const FLOWS: u16 = 96;
    const PER_FLOW: u16 = 4;
    let sent: Vec<Vec<u8>> = (0..PER_FLOW)
        .flat_map(|seq| (0..FLOWS).map(move |flow| udp_frame(flow, seq)))
        .collect();
    let refs: Vec<&[u8]> = sent.iter().map(|f| f.as_slice()).collect();
    assert_eq!(a.tx_batch(&refs).unwrap(), sent.len());

    // Per handle: the (flow, seq) of each test frame in arrival order.
    let mut got: Vec<Vec<(u16, u16)>> = vec![Vec::new(); qs.len()];
    let mut all_frames = 0u64;
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let start = Instant::now();
    let total = |g: &Vec<Vec<(u16, u16)>>| g.iter().map(Vec::len).sum::<usize>();
    while total(&got) < sent.len() && start.elapsed() < WAIT {
        for (i, q) in qs.iter_mut().enumerate() {
            wait_readable(q.fd().unwrap(), 10);
            let k = q.rx_batch(&mut bufs).unwrap();
            all_frames += k as u64;
            got[i].extend(bufs[..k].iter().filter_map(|b| udp_marker(b.data())));
        }
    }
    // Settle, then make sure nothing more (no duplicate) arrives anywhere.
    std::thread::sleep(Duration::from_millis(50));
    for (i, q) in qs.iter_mut().enumerate() {
        let k = q.rx_batch(&mut bufs).unwrap();
        all_frames += k as u64;
        got[i].extend(bufs[..k].iter().filter_map(|b| udp_marker(b.data())));
    }
    assert_eq!(
        b.rx_batch(&mut bufs).unwrap(),
        0,
        "port's own rx is retired"
    );

    // Every frame exactly once.
    let mut seen: Vec<(u16, u16)> = got.iter().flatten().copied().collect();
    seen.sort();
    let mut want: Vec<(u16, u16)> = (0..FLOWS)
        .flat_map(|f| (0..PER_FLOW).map(move |s| (f, s)))
        .collect();
    want.sort();
    assert_eq!(seen, want);
    // Spread: every handle got some flows; a flow stays on one handle, in
    // order.
    for (i, g) in got.iter().enumerate() {
        assert!(!g.is_empty(), "handle {i} received nothing");
        for flow in 0..FLOWS {
            let seqs: Vec<u16> = g.iter().filter(|x| x.0 == flow).map(|x| x.1).collect();
            assert!(
                seqs.is_empty() || seqs == (0..PER_FLOW).collect::<Vec<_>>(),
                "flow {flow} on handle {i}: {seqs:?}"
            );
        }
    }
    // The port's counters cover every handle.
    let st = b.stats();
    assert_eq!(st.rx_packets, all_frames);
    assert_eq!(st.rx_dropped, 0);
}

#[test]
fn rx_queues_of_one_hands_out_the_port_socket() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let mut a = ns.open("va", AfPacketOpts::default());
    let mut b = ns.open("vb", AfPacketOpts::default());
    let mut qs = b.rx_queues(1).unwrap();
    assert_eq!(qs.len(), 1);
    let mut q = qs.pop().unwrap();
    let f = frame(1, 1, 60);
    assert_eq!(a.tx_batch(&[&f]).unwrap(), 1);
    // Received on another thread (handles are Send).
    let got = std::thread::spawn(move || {
        let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
        let start = Instant::now();
        while start.elapsed() < WAIT {
            wait_readable(q.fd().unwrap(), 50);
            let k = q.rx_batch(&mut bufs).unwrap();
            if let Some(b) = bufs[..k].iter().find(|b| is_test_frame(b.data())) {
                return Some(b.data().to_vec());
            }
        }
        None
    })
    .join()
    .unwrap();
    assert_eq!(got, Some(f));
    assert!(b.stats().rx_packets >= 1);
}

/// Sends `frames` from `tx` and checks that `rx` receives exactly them, in
/// order (other traffic on the link is filtered out).
fn check_exchange(tx: &mut dyn Port, rx: &mut dyn Port, frames: &[Vec<u8>]) {
    let refs: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
    assert_eq!(
        tx.tx_batch(&refs).unwrap(),
        frames.len(),
        "{:?}",
        tx.stats()
    );
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let mut got = Vec::new();
    let start = Instant::now();
    while got.len() < frames.len() && start.elapsed() < WAIT {
        wait_readable(rx.fd().unwrap(), 20);
        let k = rx.rx_batch(&mut bufs).unwrap();
        got.extend(
            bufs[..k]
                .iter()
                .map(|b| b.data().to_vec())
                .filter(|f| is_test_frame(f)),
        );
    }
    assert_eq!(got.len(), frames.len(), "{:?}", rx.stats());
    assert!(got == frames, "frames differ");
}

#[test]
fn xdp_port_exchanges_frames_both_ways_in_each_mode() {
    let sizes = [60, 64, 128, 333, 1000, 1514];
    let mut worked = Vec::new();
    for mode in [XdpMode::NativeCopy, XdpMode::Generic] {
        let ns = Netns::new();
        ns.veth("va", "vb");
        let opts = XdpOpts {
            modes: vec![mode],
            ..XdpOpts::default()
        };
        let mut x = match ns.open_xdp("va", opts) {
            Ok(x) => x,
            // Native XDP depends on the driver; generic must work.
            Err(e) if mode != XdpMode::Generic => {
                eprintln!("{mode}: {e}");
                continue;
            }
            Err(e) => panic!("generic XDP: {e}"),
        };
        assert_eq!(x.mode(), mode);
        assert_eq!(x.queues(), 1);
        let mut p = ns.open("vb", AfPacketOpts::default());
        assert_eq!(x.hw_addr(), {
            let mut q = ns.open("va", AfPacketOpts::default());
            q.rx_batch(&mut []).unwrap();
            q.hw_addr()
        });
        assert!(x.link_up());
        assert_eq!(x.mtu().unwrap(), 1500);

        // In through XDP, more than one batch and more than one ring lap
        // of the transmit frames is not needed here; 3 rounds of 100.
        for round in 0..3u16 {
            let to_x: Vec<Vec<u8>> = (0..100)
                .map(|i| frame(1, round * 100 + i, sizes[i as usize % sizes.len()]))
                .collect();
            check_exchange(&mut p, &mut x, &to_x);
            let from_x: Vec<Vec<u8>> = (0..100)
                .map(|i| frame(2, round * 100 + i, sizes[(i as usize + 1) % sizes.len()]))
                .collect();
            check_exchange(&mut x, &mut p, &from_x);
        }
        let st = x.stats();
        assert!(st.rx_packets >= 300, "{st:?}");
        assert_eq!(st.tx_packets, 300);
        let want_bytes: u64 = (0..300)
            .map(|i| sizes[(i % 100 + 1) % sizes.len()] as u64)
            .sum();
        assert_eq!(st.tx_bytes, want_bytes);
        assert_eq!(st.tx_dropped + st.tx_errors + st.rx_dropped, 0, "{st:?}");
        // Too big for a UMEM frame: refused and counted, not sent.
        let big = frame(3, 0, 3000);
        assert_eq!(x.tx_batch(&[&big]).unwrap(), 0);
        assert_eq!(x.stats().tx_errors, 1);
        worked.push(mode);
    }
    eprintln!("XDP modes that worked on veth: {worked:?}");
    assert!(worked.contains(&XdpMode::Generic));
}

#[test]
fn xdp_port_default_open_takes_the_best_mode_and_hands_out_its_queue() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let mut x = ns.open_xdp("va", XdpOpts::default()).unwrap();
    eprintln!("default XDP mode on veth: {}", x.mode());
    let mut p = ns.open("vb", AfPacketOpts::default());
    // One queue: no lock-free transmit clone; two handles cannot be made,
    // one can.
    assert_eq!(
        x.tx_clone().err().map(|e| e.kind()),
        Some(std::io::ErrorKind::Unsupported)
    );
    assert!(x.rx_queues(2).is_err());
    let mut qs = x.rx_queues(1).unwrap();
    let mut q = qs.pop().unwrap();
    let f = frame(1, 7, 200);
    assert_eq!(p.tx_batch(&[&f]).unwrap(), 1);
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let mut got = None;
    let start = Instant::now();
    while got.is_none() && start.elapsed() < WAIT {
        wait_readable(q.fd().unwrap(), 20);
        let k = q.rx_batch(&mut bufs).unwrap();
        got = bufs[..k]
            .iter()
            .map(|b| b.data().to_vec())
            .find(|d| is_test_frame(d));
    }
    assert_eq!(got, Some(f));
    assert_eq!(
        x.rx_batch(&mut bufs).unwrap(),
        0,
        "port's own rx is retired"
    );
    assert!(x.stats().rx_packets >= 1);
    // Transmit still works through the port.
    check_exchange(&mut x, &mut p, &[frame(2, 1, 60)]);
}

#[test]
fn xdp_port_on_a_multi_queue_veth_splits_flows_over_handles() {
    let ns = Netns::new();
    ns.ip(&[
        "link",
        "add",
        "va",
        "numtxqueues",
        "2",
        "numrxqueues",
        "2",
        "type",
        "veth",
        "peer",
        "name",
        "vb",
        "numtxqueues",
        "2",
        "numrxqueues",
        "2",
    ]);
    ns.ip(&["link", "set", "va", "up"]);
    ns.ip(&["link", "set", "vb", "up"]);
    let mut x = ns.open_xdp("va", XdpOpts::default()).unwrap();
    assert_eq!(x.queues(), 2);
    let mut p = ns.open("vb", AfPacketOpts::default());
    let mut qs = x.rx_queues(2).unwrap();
    const FLOWS: u16 = 64;
    let sent: Vec<Vec<u8>> = (0..FLOWS).map(|flow| udp_frame(flow, 0)).collect();
    let refs: Vec<&[u8]> = sent.iter().map(|f| f.as_slice()).collect();
    assert_eq!(p.tx_batch(&refs).unwrap(), sent.len());
    let mut got: Vec<Vec<(u16, u16)>> = vec![Vec::new(); 2];
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let start = Instant::now();
    while got.iter().map(Vec::len).sum::<usize>() < sent.len() && start.elapsed() < WAIT {
        for (i, q) in qs.iter_mut().enumerate() {
            wait_readable(q.fd().unwrap(), 10);
            let k = q.rx_batch(&mut bufs).unwrap();
            got[i].extend(bufs[..k].iter().filter_map(|b| udp_marker(b.data())));
        }
    }
    let mut seen: Vec<(u16, u16)> = got.iter().flatten().copied().collect();
    seen.sort();
    assert_eq!(seen, (0..FLOWS).map(|f| (f, 0)).collect::<Vec<_>>());
    assert!(
        got.iter().all(|g| !g.is_empty()),
        "one queue got nothing: {got:?}"
    );

    // Two queues: one lock-free transmit clone (queue 1's socket), used
    // from another thread, counted on the port.
    let mut tx = x.tx_clone().unwrap();
    assert!(x.tx_clone().is_err());
    let frames: Vec<Vec<u8>> = (0..40).map(|i| frame(9, i, 100)).collect();
    let f2 = frames.clone();
    std::thread::spawn(move || {
        let refs: Vec<&[u8]> = f2.iter().map(|f| f.as_slice()).collect();
        assert_eq!(tx.tx_batch(&refs).unwrap(), 40);
    })
    .join()
    .unwrap();
    assert_eq!(recv_n(&mut p, 40), frames);
    assert_eq!(x.stats().tx_packets, 40);
    check_exchange(&mut x, &mut p, &[frame(9, 99, 60)]);
    assert_eq!(x.stats().tx_packets, 41);
}

/// An Ethernet/IPv4/TCP frame with `payload` bytes and valid checksums
/// (TCP sequence number `seq`, marker ethertype-independent: the ports
/// 4242 -> 5151 identify our frames).
fn tcp_frame(payload: usize, seq: u32) -> Vec<u8> {
    use packet::checksum;
    let mut f = vec![0x02, 0, 0, 0, 0, 0xbb, 0x02, 0, 0, 0, 0, 0xaa, 0x08, 0x00];
    let tot = (20 + 20 + payload) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (tot >> 8) as u8,
        tot as u8,
        0,
        1,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 9, 0, 1, 10, 9, 0, 2]);
    let ipc = checksum::checksum(0, &f[14..34]);
    f[24..26].copy_from_slice(&ipc.to_be_bytes());
    f.extend_from_slice(&[0x10, 0x92, 0x14, 0x1f]);
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    f.extend((0..payload).map(|i| (i % 251) as u8));
    let p = checksum::pseudo_v4(&f[26..30], &f[30..34], 6, f.len() - 34);
    let c = checksum::checksum(p, &f[34..]);
    f[50..52].copy_from_slice(&c.to_be_bytes());
    f
}

/// Whether `f` is one of `tcp_frame`'s frames (or a segment of one) with
/// valid IPv4 and TCP checksums and an IP length matching the frame.
fn tcp_frame_valid(f: &[u8]) -> bool {
    use packet::checksum;
    let tot = usize::from(u16::from_be_bytes([f[16], f[17]]));
    let ip_ok = checksum::fold(checksum::sum_bytes(0, &f[14..34], false)) == 0xffff;
    let p = checksum::pseudo_v4(&f[26..30], &f[30..34], 6, f.len() - 34);
    let tcp_ok = checksum::fold(checksum::sum_bytes(p, &f[34..], false)) == 0xffff;
    tot + 14 == f.len() && ip_ok && tcp_ok
}

fn is_tcp_test_frame(f: &[u8]) -> bool {
    f.len() >= 54
        && f[12..14] == [0x08, 0x00]
        && f[23] == 6
        && f[34..38] == [0x10, 0x92, 0x14, 0x1f]
}

#[test]
fn vnet_hdr_ports_pass_tcp_super_frames_whole_or_segmented() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let vnet = AfPacketOpts {
        vnet_hdr: true,
        ..AfPacketOpts::default()
    };
    let mut a = ns.open("va", vnet.clone());
    let mut b = ns.open("vb", vnet);
    assert_eq!(a.max_frame_len(), ports::VNET_MAX_FRAME);
    assert_eq!(
        ns.open("va", AfPacketOpts::default()).max_frame_len(),
        PacketBuf::new().tailroom()
    );
    let cap = b.max_frame_len();
    let mut bufs: Vec<PacketBuf> = (0..BATCH)
        .map(|_| PacketBuf::with_capacity(128, cap))
        .collect();
    let mut recv = |b: &mut AfPacket, until: &dyn Fn(&[Vec<u8>]) -> bool| {
        let mut got: Vec<Vec<u8>> = Vec::new();
        let start = Instant::now();
        while !until(&got) && start.elapsed() < WAIT {
            wait_readable(b.fd().unwrap(), 20);
            let k = b.rx_batch(&mut bufs).unwrap();
            got.extend(
                bufs[..k]
                    .iter()
                    .map(|x| x.data().to_vec())
                    .filter(|f| is_tcp_test_frame(f)),
            );
        }
        got
    };

    // veth does TSO: the 20000-byte super-frame crosses whole, valid.
    let big = tcp_frame(20000, 1000);
    assert!(tcp_frame_valid(&big));
    assert_eq!(a.tx_batch(&[&big]).unwrap(), 1, "{:?}", a.stats());
    let got = recv(&mut b, &|g| !g.is_empty());
    assert_eq!(got, vec![big.clone()]);
    assert!(b.stats().rx_bytes >= 20054);

    // Without TSO on va the kernel segments it, as our header asked: MSS
    // 1460 (MTU 1500 - 40), every segment valid (checksums completed on
    // receive), payload intact and in order.
    run(&[
        "ip", "netns", "exec", &ns.name, "ethtool", "-K", "va", "tso", "off",
    ]);
    assert_eq!(a.tx_batch(&[&big]).unwrap(), 1);
    let want = 20000usize.div_ceil(1460);
    let segs = recv(&mut b, &|g| g.len() >= want);
    assert_eq!(segs.len(), want);
    let mut payload = Vec::new();
    let mut seq = 1000u32;
    for s in &segs {
        assert!(s.len() <= 1514, "segment of {} bytes", s.len());
        assert!(tcp_frame_valid(s), "bad segment");
        assert_eq!(u32::from_be_bytes([s[38], s[39], s[40], s[41]]), seq);
        seq += (s.len() - 54) as u32;
        payload.extend_from_slice(&s[54..]);
    }
    assert_eq!(payload, big[54..]);
    // Small frames go out untouched.
    let small = tcp_frame(100, 7);
    assert_eq!(a.tx_batch(&[&small]).unwrap(), 1);
    assert_eq!(recv(&mut b, &|g| !g.is_empty()), vec![small]);
}

#[test]
fn xdp_port_refuses_an_mtu_its_frames_cannot_hold() {
    let ns = Netns::new();
    ns.veth("va", "vb");
    ns.ip(&["link", "set", "va", "mtu", "3000"]);
    let e = ns
        .open_xdp("va", XdpOpts::default())
        .err()
        .expect("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::Unsupported);
    assert!(e.to_string().contains("MTU 3000"), "{e}");
    // The largest MTU it takes carries full-sized frames (two VLAN tags of
    // slack).
    let mtu = ports::xdp::MAX_XDP_FRAME - 22;
    ns.ip(&["link", "set", "va", "mtu", &mtu.to_string()]);
    ns.ip(&["link", "set", "vb", "mtu", &mtu.to_string()]);
    let mut x = ns.open_xdp("va", XdpOpts::default()).unwrap();
    let mut p = ns.open("vb", AfPacketOpts::default());
    let frames: Vec<Vec<u8>> = (0..4).map(|i| frame(5, i, mtu + 14 - i as usize)).collect();
    check_exchange(&mut p, &mut x, &frames);
    check_exchange(&mut x, &mut p, &frames);
}

#[test]
fn recvmmsg_and_block_ring_modes_are_byte_exact_with_tags_and_super_frames() {
    for mode in [ports::RxMode::Recvmmsg, ports::RxMode::BlockRing] {
        other_receive_mode(mode);
    }
}

fn other_receive_mode(mode: ports::RxMode) {
    let ns = Netns::new();
    ns.veth("va", "vb");
    let ring = AfPacketOpts {
        rx: mode,
        vnet_hdr: true,
        ..AfPacketOpts::default()
    };
    let mut a = ns.open("va", AfPacketOpts::default());
    let mut b = ns.open("vb", ring);
    let mut tagged = frame(1, 2, 80);
    tagged.splice(12..12, [0x81, 0x00, 0x20, 0x64]);
    let sent: Vec<Vec<u8>> = (0..70)
        .map(|i| frame(1, i, 60 + i as usize))
        .chain([tagged])
        .collect();
    let refs: Vec<&[u8]> = sent.iter().map(|f| f.as_slice()).collect();
    assert_eq!(a.tx_batch(&refs).unwrap(), sent.len());
    assert_eq!(recv_n(&mut b, sent.len()), sent);
    // A TSO super-frame from a vnet sender arrives whole and valid.
    let mut av = ns.open(
        "va",
        AfPacketOpts {
            vnet_hdr: true,
            ..AfPacketOpts::default()
        },
    );
    let big = tcp_frame(9000, 5);
    assert_eq!(av.tx_batch(&[&big]).unwrap(), 1);
    let cap = b.max_frame_len();
    let mut bufs: Vec<PacketBuf> = (0..BATCH)
        .map(|_| PacketBuf::with_capacity(128, cap))
        .collect();
    let start = Instant::now();
    let mut got = None;
    while got.is_none() && start.elapsed() < WAIT {
        wait_readable(b.fd().unwrap(), 20);
        let k = b.rx_batch(&mut bufs).unwrap();
        got = bufs[..k]
            .iter()
            .map(|x| x.data().to_vec())
            .find(|f| is_tcp_test_frame(f));
    }
    assert_eq!(got, Some(big));
}
