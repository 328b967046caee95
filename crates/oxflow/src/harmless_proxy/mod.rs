//! `oxflow harmless proxy`: the HARMLESS translating proxy.
//!
//! An OpenFlow 1.3 proxy between an unmodified controller and any OpenFlow
//! 1.3 switch that has only the trunk from a legacy switch (e.g. Open
//! vSwitch): the controller sees one port per access VLAN and writes rules
//! for them; the proxy rewrites those rules and messages for the trunk
//! (`messages`, `actions`; docs/harmless.md lists what is supported).
//!
//! ```text
//! oxflow harmless proxy --listen 127.0.0.1:6653 --controller 127.0.0.1:6633 \
//!     --trunk-port 1 --vlans 101-110 [--port-base 1]
//! ```
//!
//! The switch connects to `--listen`; for each switch connection the proxy
//! opens one to `--controller` and relays both ways (one thread per
//! direction) until either side closes, then closes the other. The proxy
//! adds no handshake of its own: HELLO, FEATURES, echo and everything that
//! names no port pass through as the original bytes.

mod actions;
mod messages;
mod portmap;

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;

use messages::{Outcome, Pending, Proxy};
use portmap::PortMap;

/// Command line of `oxflow harmless proxy`.
#[derive(Debug, Parser)]
#[command(
    name = "oxflow harmless proxy",
    about = "OpenFlow 1.3 proxy: the controller sees one port per access VLAN of a switch's trunk"
)]
struct ProxyArgs {
    /// Where the switch connects: HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// The controller to connect to for each switch: HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    controller: String,
    /// The trunk's OpenFlow port number on the switch.
    #[arg(long, value_name = "N")]
    trunk_port: u32,
    /// The access VLANs on the trunk, FIRST-LAST (one logical port each).
    #[arg(long, value_name = "FIRST-LAST")]
    vlans: String,
    /// Logical port number of the first VLAN.
    #[arg(long, value_name = "N", default_value_t = 1)]
    port_base: u32,
}

/// Reads one OpenFlow message (header + body); `None` at a clean end of
/// stream. A length below the header's 8 bytes is an error (the stream
/// cannot be re-framed).
fn read_msg(s: &mut TcpStream) -> io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; 8];
    match s.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = usize::from(u16::from_be_bytes([head[2], head[3]]));
    if len < 8 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("OpenFlow length {len} below 8"),
        ));
    }
    let mut msg = vec![0u8; len];
    msg[..8].copy_from_slice(&head);
    s.read_exact(&mut msg[8..])?;
    Ok(Some(msg))
}

/// The writing halves of a connection pair, shared by both relay threads.
struct Pair {
    switch: Mutex<TcpStream>,
    controller: Mutex<TcpStream>,
}

impl Pair {
    fn send(&self, out: Outcome) -> io::Result<()> {
        if !out.to_switch.is_empty() {
            let mut s = self.switch.lock().unwrap_or_else(|e| e.into_inner());
            for m in &out.to_switch {
                s.write_all(m)?;
            }
        }
        if !out.to_controller.is_empty() {
            let mut s = self.controller.lock().unwrap_or_else(|e| e.into_inner());
            for m in &out.to_controller {
                s.write_all(m)?;
            }
        }
        Ok(())
    }

    fn close(&self) {
        for s in [&self.switch, &self.controller] {
            let _ = s
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .shutdown(Shutdown::Both);
        }
    }
}

/// Relays messages read from `from` through `step` until the stream ends.
fn relay(mut from: TcpStream, pair: &Pair, step: impl Fn(&[u8]) -> Outcome) -> io::Result<()> {
    while let Some(msg) = read_msg(&mut from)? {
        pair.send(step(&msg))?;
    }
    Ok(())
}

fn connect(addrs: &[SocketAddr]) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for a in addrs {
        match TcpStream::connect_timeout(a, Duration::from_secs(5)) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn serve(switch: TcpStream, controller: &[SocketAddr], proxy: Arc<Proxy>) -> io::Result<()> {
    let peer = switch.peer_addr()?;
    let ctl = match connect(controller) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("switch {peer}: cannot reach the controller: {e}; closing");
            return Ok(());
        }
    };
    tracing::info!(
        "switch {peer} connected; relaying to controller {}",
        ctl.peer_addr()?
    );
    switch.set_nodelay(true)?;
    ctl.set_nodelay(true)?;
    let pair = Arc::new(Pair {
        switch: Mutex::new(switch.try_clone()?),
        controller: Mutex::new(ctl.try_clone()?),
    });
    let pending = Arc::new(Mutex::new(Pending::default()));
    let down = {
        let (pair, pending, proxy) = (pair.clone(), pending.clone(), proxy.clone());
        std::thread::spawn(move || {
            let r = relay(ctl, &pair, |m| {
                proxy.on_controller_msg(m, &mut pending.lock().unwrap_or_else(|e| e.into_inner()))
            });
            pair.close();
            r
        })
    };
    let up = relay(switch, &pair, |m| {
        proxy.on_switch_msg(m, &mut pending.lock().unwrap_or_else(|e| e.into_inner()))
    });
    pair.close();
    let down = down.join().unwrap_or(Ok(()));
    tracing::info!("switch {peer} disconnected");
    up.and(down)
}

/// `oxflow harmless proxy ARGS`: exit status 0 (never returns while
/// serving), 1 when it cannot listen, 2 for bad arguments.
pub fn main_with_args(words: &[String]) -> u8 {
    let argv = std::iter::once("oxflow harmless proxy".to_string()).chain(words.iter().cloned());
    let args = match ProxyArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let map = match PortMap::parse_vlans(&args.vlans)
        .and_then(|(a, b)| PortMap::new(args.trunk_port, a, b, args.port_base))
    {
        Ok(m) => m,
        Err(e) => {
            eprintln!("oxflow harmless proxy: {e}");
            return 2;
        }
    };
    let controller: Vec<SocketAddr> = match args.controller.to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => {
            eprintln!(
                "oxflow harmless proxy: --controller {:?}: not HOST:PORT ({e})",
                args.controller
            );
            return 2;
        }
    };
    let listener = match TcpListener::bind(&args.listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "oxflow harmless proxy: cannot listen on {}: {e}",
                args.listen
            );
            return 1;
        }
    };
    init_logging();
    let local = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| args.listen.clone());
    tracing::info!(
        "listening on {local}; controller {}; trunk port {}, VLANs {}-{} as ports {}-{}",
        args.controller,
        map.trunk,
        map.first_vid,
        map.last_vid,
        map.port_base,
        map.port_base + map.len() - 1
    );
    let proxy = Arc::new(Proxy::new(map));
    for conn in listener.incoming() {
        match conn {
            Ok(s) => {
                let (proxy, controller) = (proxy.clone(), controller.clone());
                std::thread::spawn(move || {
                    if let Err(e) = serve(s, &controller, proxy) {
                        tracing::info!("connection ended: {e}");
                    }
                });
            }
            Err(e) => tracing::warn!("accept: {e}"),
        }
    }
    0
}

fn init_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
