//! Module kinds by name, so a configuration can build them.
//!
//! A [`Registry`] maps a kind (`"port_inc"`, `"l2_learning"`, ...) to a
//! constructor that takes the module's arguments ([`Args`], the other keys
//! of its `[[module]]` table) and the worker's environment ([`Env`]: its
//! port handles, and the queues and data-plane tables shared by workers).
//! [`Registry::builtin`] registers every module of this crate; a crate that
//! adds a module (the OpenFlow pipeline) calls [`Registry::register`].
//! Arguments a constructor did not read are refused (a misspelt key is an
//! error, not a silent default).

use crate::module::Module;
use crate::modules;
use crate::state::StateTable;
use crossbeam_queue::ArrayQueue;
use packet::PacketBuf;
use ports::{Port, PortRx, PortTx};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};

use crate::batch::Meta;

/// A constructor: arguments and environment to a module, or why not.
pub type Ctor = fn(&Args, &mut Env) -> Result<Box<dyn Module>, String>;

/// Kind name -> constructor; see the module comment.
#[derive(Clone, Default)]
pub struct Registry {
    kinds: BTreeMap<String, Ctor>,
}

impl Registry {
    /// Every built-in module.
    pub fn builtin() -> Registry {
        let mut r = Registry::default();
        modules::register_all(&mut r);
        r
    }

    /// Adds (or replaces) a kind.
    pub fn register(&mut self, kind: &str, ctor: Ctor) {
        self.kinds.insert(kind.to_string(), ctor);
    }

    /// Builds a module of `kind`; errors name the problem.
    pub fn build(&self, kind: &str, args: &Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
        let ctor = self.kinds.get(kind).ok_or_else(|| {
            format!(
                "unknown module kind `{kind}` (known: {})",
                self.kinds.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })?;
        let m = ctor(args, env)?;
        args.check_all_used(kind)?;
        Ok(m)
    }

    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.kinds.keys().map(String::as_str)
    }
}

/// A module's arguments: a TOML table, with typed getters that remember
/// which keys were read.
#[derive(Debug, Default)]
pub struct Args {
    table: toml::Table,
    used: RefCell<Vec<String>>,
}

impl Args {
    pub fn new(table: toml::Table) -> Args {
        Args {
            table,
            used: RefCell::default(),
        }
    }

    /// Parses `text` as a TOML table (handy in tests and run-time changes).
    pub fn parse(text: &str) -> Result<Args, String> {
        text.parse::<toml::Table>()
            .map(Args::new)
            .map_err(|e| e.message().to_string())
    }

    fn get(&self, key: &str) -> Option<&toml::Value> {
        self.used.borrow_mut().push(key.to_string());
        self.table.get(key)
    }

    pub fn str(&self, key: &str) -> Result<Option<&str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| format!("argument `{key}` must be a string")),
        }
    }

    pub fn u64(&self, key: &str) -> Result<Option<u64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_integer()
                .and_then(|i| u64::try_from(i).ok())
                .map(Some)
                .ok_or_else(|| format!("argument `{key}` must be a non-negative integer")),
        }
    }

    pub fn u32(&self, key: &str) -> Result<Option<u32>, String> {
        match self.u64(key)? {
            None => Ok(None),
            Some(v) => u32::try_from(v)
                .map(Some)
                .map_err(|_| format!("argument `{key}` is too large")),
        }
    }

    pub fn bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| format!("argument `{key}` must be true or false")),
        }
    }

    /// A list of non-negative integers below `max`.
    pub fn u32_list(&self, key: &str, max: u64) -> Result<Option<Vec<u32>>, String> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let bad = || format!("argument `{key}` must be a list of integers 0..{max}");
        let arr = v.as_array().ok_or_else(bad)?;
        arr.iter()
            .map(|x| {
                x.as_integer()
                    .and_then(|i| u64::try_from(i).ok())
                    .filter(|i| *i < max)
                    .map(|i| i as u32)
                    .ok_or_else(bad)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// A required argument.
    pub fn need<T>(v: Result<Option<T>, String>, key: &str) -> Result<T, String> {
        v?.ok_or_else(|| format!("missing argument `{key}`"))
    }

    fn check_all_used(&self, kind: &str) -> Result<(), String> {
        let used = self.used.borrow();
        match self.table.keys().find(|k| !used.contains(k)) {
            Some(k) => Err(format!("unknown argument `{k}` for a `{kind}` module")),
            None => Ok(()),
        }
    }
}

/// The ring of a `queue` module: packets and their metadata.
pub type Ring = ArrayQueue<(PacketBuf, Meta)>;

/// Makes a transmit handle on a port (one per `port_out` module).
pub type TxFactory = Box<dyn Fn() -> io::Result<Box<dyn PortTx>> + Send>;

struct PortEntry {
    no: u32,
    /// Receive handles by queue number, taken by `port_inc` modules.
    rx: Vec<Option<Box<dyn PortRx>>>,
    tx: TxFactory,
}

/// Queues and data-plane tables shared by every worker's graph, by name
/// (a cheap clone; the mutex is taken only when a module is built).
#[derive(Clone, Default)]
pub struct Shared {
    queues: Arc<Mutex<HashMap<String, Arc<Ring>>>>,
    tables: Arc<Mutex<HashMap<String, Arc<StateTable>>>>,
}

impl Shared {
    /// The queue called `name`, created with `capacity` on first use.
    pub fn queue(&self, name: &str, capacity: usize) -> Arc<Ring> {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            q.entry(name.to_string())
                .or_insert_with(|| Arc::new(ArrayQueue::new(capacity.max(1)))),
        )
    }

    /// The data-plane table called `name`, created with `slots` on first use.
    pub fn table(&self, name: &str, slots: usize) -> Arc<StateTable> {
        let mut t = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            t.entry(name.to_string())
                .or_insert_with(|| Arc::new(StateTable::new(slots))),
        )
    }
}

/// What module constructors may use: the worker's ports, the shared
/// state, and what the host put there for its own module kinds
/// (`ext`: one value per type, e.g. the switch's pipeline replica for its
/// `openflow` module); see the module comment.
#[derive(Default)]
pub struct Env {
    ports: HashMap<String, PortEntry>,
    pub shared: Shared,
    ext: HashMap<std::any::TypeId, Box<dyn std::any::Any + Send>>,
}

impl Env {
    pub fn new(shared: Shared) -> Env {
        Env {
            ports: HashMap::new(),
            shared,
            ext: HashMap::new(),
        }
    }

    /// Puts the host's value of type `T` (replacing the previous one).
    pub fn put<T: std::any::Any + Send>(&mut self, v: T) {
        self.ext.insert(std::any::TypeId::of::<T>(), Box::new(v));
    }

    /// The host's value of type `T`.
    pub fn get<T: std::any::Any + Send>(&self) -> Option<&T> {
        self.ext
            .get(&std::any::TypeId::of::<T>())
            .and_then(|b| b.downcast_ref())
    }

    /// The host's value of type `T`, mutable.
    pub fn get_mut<T: std::any::Any + Send>(&mut self) -> Option<&mut T> {
        self.ext
            .get_mut(&std::any::TypeId::of::<T>())
            .and_then(|b| b.downcast_mut())
    }

    /// Takes the host's value of type `T` out (a resource only one module
    /// may own; [`Module::release`] puts it back).
    pub fn take<T: std::any::Any + Send>(&mut self) -> Option<T> {
        self.ext
            .remove(&std::any::TypeId::of::<T>())
            .and_then(|b| b.downcast().ok())
            .map(|b| *b)
    }

    /// Names of the ports, sorted.
    pub fn port_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.ports.keys().cloned().collect();
        v.sort();
        v
    }

    /// Makes port `name` (OpenFlow number `no`) available: its receive
    /// handles (one per queue) and a maker of transmit handles.
    pub fn add_port(&mut self, name: &str, no: u32, rx: Vec<Box<dyn PortRx>>, tx: TxFactory) {
        let rx = rx.into_iter().map(Some).collect();
        self.ports
            .insert(name.to_string(), PortEntry { no, rx, tx });
    }

    /// Whether port `name` is available.
    pub fn has_port(&self, name: &str) -> bool {
        self.ports.contains_key(name)
    }

    /// Takes port `name` away (the host removed it); its receive handles
    /// that no module holds are dropped. A module still using it keeps
    /// its handle (a host checks [`crate::Module::port`] first).
    pub fn remove_port(&mut self, name: &str) {
        self.ports.remove(name);
    }

    /// Makes a whole [`Port`] available: one receive handle (the port
    /// itself behind a mutex, taken once per batch) and its transmit clones.
    pub fn add_whole_port(&mut self, name: &str, no: u32, port: Box<dyn Port>) {
        let port = Arc::new(Mutex::new(port));
        let p2 = Arc::clone(&port);
        let tx: TxFactory =
            Box::new(move || p2.lock().unwrap_or_else(|e| e.into_inner()).tx_clone());
        self.add_port(name, no, vec![Box::new(LockedRx(port))], tx);
    }

    /// Takes the receive handle of `name`'s queue `queue`, with the port's
    /// number.
    pub fn take_rx(&mut self, name: &str, queue: usize) -> Result<(u32, Box<dyn PortRx>), String> {
        let p = self
            .ports
            .get_mut(name)
            .ok_or_else(|| format!("no port `{name}`"))?;
        let no = p.no;
        p.rx.get_mut(queue)
            .and_then(Option::take)
            .map(|rx| (no, rx))
            .ok_or_else(|| format!("port `{name}` has no free receive queue {queue}"))
    }

    /// Gives a receive handle back (a module that owned it was removed).
    pub fn return_rx(&mut self, name: &str, queue: usize, rx: Box<dyn PortRx>) {
        if let Some(slot) = self.ports.get_mut(name).and_then(|p| p.rx.get_mut(queue)) {
            *slot = Some(rx);
        }
    }

    /// A new transmit handle on `name`, with the port's number.
    pub fn tx(&self, name: &str) -> Result<(u32, Box<dyn PortTx>), String> {
        let p = self
            .ports
            .get(name)
            .ok_or_else(|| format!("no port `{name}`"))?;
        (p.tx)()
            .map(|tx| (p.no, tx))
            .map_err(|e| format!("port `{name}`: {e}"))
    }
}

/// A whole port used as a receive handle (see [`Env::add_whole_port`]).
struct LockedRx(Arc<Mutex<Box<dyn Port>>>);

impl PortRx for LockedRx {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .rx_batch(bufs)
    }

    fn fd(&self) -> Option<RawFd> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).fd()
    }
}
