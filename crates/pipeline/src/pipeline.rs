//! The whole datapath state ([`Pipeline`]): its flow tables, ports, groups,
//! meters and settings, and the state the packet path keeps between
//! batches. What it does lives beside it, one spec concept per module:
//! `flow_mod` (flow-mods), `process` and `batch` (packets, through the one
//! executor in `exec`), `group`, `meter`.

use crate::classifier::fields::{ChunkFrames, FrameFields};
use crate::group::GroupTable;
use crate::meter::MeterTable;
use crate::port::PortTable;
use crate::program;
use crate::table::FlowTable;
use crate::table_kind::TableKind;
use ofp::instruction::Instruction;
use packet::{FlowKey, Layer, PacketBuf};
use program::Program;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Number of flow tables of a full pipeline (ids 0..=254, OFPTT_MAX).
pub const N_TABLES: usize = 255;

/// Datapath settings the controller can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Send packets whose TTL a dec-TTL action found invalid to the
    /// controller (reason INVALID_TTL) instead of dropping them silently.
    /// OpenFlow 1.3 removed OFPC_INVALID_TTL_TO_CONTROLLER from the switch
    /// config and filters such packet-ins per connection with the async
    /// configuration instead, so the default is on and the switch filters.
    pub invalid_ttl_to_controller: bool,
    /// `max_len` given with INVALID_TTL packet-ins (the switch's
    /// miss_send_len; default OFPCML default 128).
    pub invalid_ttl_max_len: u16,
    /// OFPC_FRAG_DROP: IP fragments are dropped on receive, before the
    /// first table (no table counts them). Off (OFPC_FRAG_NORMAL):
    /// fragments go through the tables like any packet, later fragments
    /// with no L4 fields. Reassembly (OFPC_FRAG_REASM) is not supported.
    pub frag_drop: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            invalid_ttl_to_controller: true,
            invalid_ttl_max_len: 128,
            frag_drop: false,
        }
    }
}

/// The whole datapath state: flow tables, ports, groups, meters. `Clone`
/// makes a worker replica.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub(crate) tables: Vec<FlowTable>,
    pub ports: PortTable,
    pub groups: GroupTable,
    pub meters: MeterTable,
    pub config: Config,
    /// Packet buffers reused for the copies group buckets work on, so the
    /// packet path does not allocate once warm (one per nesting level in
    /// use; a replica starts with an empty pool).
    pub(crate) scratch: Vec<PacketBuf>,
    /// A chunk's frames as the per-table way reads them
    /// (`crate::per_table`), kept so that no chunk initialises them;
    /// `process_batch` takes them out while it runs.
    pub(crate) frames: Option<Box<ChunkFrames>>,
    /// The keys of a chunk's packets not read from their frames on the
    /// per-table way's warmed chunks (`crate::per_table`), kept as
    /// `frames` are: only those packets' keys are initialised.
    pub(crate) keys: Option<Box<[FlowKey; crate::chunk::CHUNK]>>,
    /// `process_batch`'s last decision whether to warm (see `batch`):
    /// batches left before looking again, and the decision.
    pub(crate) warm_check: (u16, bool),
    /// How deep received frames are parsed (and checked): the deepest
    /// layer any match, action, meter or group installed so far needs, at
    /// least L2 (see `Pipeline::process`). It only grows: a parse deeper
    /// than needed costs time, never correctness, and replicas that apply
    /// the same flow-mods and group-mods agree on it.
    pub(crate) parse_layer: Layer,
    /// The last few distinct instruction lists of flow-mods with their
    /// compiled programs (at most `RECENT_PROGRAMS`, newest last): a new
    /// entry with the same instructions shares both (no compile, no copy
    /// of the list: a flow-mod of a big table costs less), and one whose
    /// instructions compile to one of the programs shares the program. The
    /// many entries of a big table that do the same thing (output:2, goto
    /// 1) read one program that stays in cache instead of one each.
    recent_programs: Vec<Recent>,
    /// Hashes the lists and programs of `recent_programs` (random seed;
    /// a replica's clone keeps it, and only its own lists meet it).
    recent_hasher: hashbrown::DefaultHashBuilder,
    /// The executor hooks of `exts` (`crate::ext::registry::Hooks`), in
    /// its order: the state the data plane writes for the extensions
    /// (BEBA's state tables, global state and templates). Shared by every
    /// replica (a clone is a reference count): the control thread's
    /// STATE_MOD and a worker's SET_STATE write the same stores, and the
    /// next packet on any worker sees the write.
    pub(crate) hooks: crate::ext::registry::Hooks,
    /// What a data-plane store (a state table) holds at most, about:
    /// what `hooks` are made with.
    state_capacity: usize,
    /// Whether some flow entry added so far matches an extension field or
    /// runs an extension action (`crate::ext`); it only grows, as
    /// `parse_layer`. While set, the per-table way steps aside.
    pub(crate) ext_flows: bool,
    /// The extensions this pipeline knows (`crate::ext::registry`): given
    /// when built ([`Pipeline::with_extensions`]), none by default.
    /// Consulted when flow-mods, group-mods and packet-outs are compiled,
    /// never per packet.
    pub(crate) exts: crate::ext::registry::Extensions,
    /// Queue ids that some port has besides the default queue 0 (set by
    /// the switch from its port configuration): a set-queue action to an
    /// id no port has is BAD_ACTION/BAD_QUEUE. Which port the frame
    /// leaves by is only known when it does, so a queue the output port
    /// lacks is not an error here; the switch sends such a frame on the
    /// port's default queue.
    pub queue_ids: std::collections::BTreeSet<u32>,
}

/// One of `Pipeline::recent_programs`: an instruction list and its
/// program, each with its hash. A search compares the hashes and only
/// the list or program whose hash is equal: a flow-mod whose instructions
/// are its own (a NAT entry's address and port, a route's next hop) used
/// to compare them with all sixteen lists and its program with all
/// sixteen programs, field by field (a fifth of installing 100,000
/// gateway flows).
#[derive(Debug, Clone)]
struct Recent {
    list_hash: u64,
    list: Arc<[Instruction]>,
    program_hash: u64,
    program: Arc<Program>,
}

/// How many programs `Pipeline::recent_programs` keeps.
const RECENT_PROGRAMS: usize = 16;

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline::new(N_TABLES)
    }
}

impl Pipeline {
    /// A pipeline with `n_tables` tables (clamped to 1..=255), no ports.
    pub fn new(n_tables: usize) -> Pipeline {
        let n = n_tables.clamp(1, N_TABLES);
        Pipeline {
            tables: (0..n).map(|i| FlowTable::new(i as u8)).collect(),
            ports: PortTable::new(),
            groups: GroupTable::new(),
            meters: MeterTable::new(),
            config: Config::default(),
            scratch: Vec::new(),
            frames: Some(Box::new([FrameFields::EMPTY; crate::chunk::CHUNK])),
            keys: Some(Box::new([FlowKey::new(0); crate::chunk::CHUNK])),
            warm_check: (0, false),
            parse_layer: Layer::L2,
            recent_programs: Vec::new(),
            recent_hasher: Default::default(),
            queue_ids: Default::default(),
            hooks: Default::default(),
            state_capacity: stateful::DEFAULT_CAPACITY,
            ext_flows: false,
            exts: Default::default(),
        }
    }

    /// This pipeline knowing the extensions `exts` (`crate::ext`): their
    /// experimenter match fields, actions and instructions are accepted
    /// from now on, and their executor hooks are made (empty state). The
    /// switch passes the flow part of its table of extensions; call
    /// before making replicas.
    pub fn with_extensions(mut self, exts: crate::ext::registry::Extensions) -> Pipeline {
        self.exts = exts;
        self.make_hooks();
        self
    }

    /// The extensions this pipeline knows.
    pub fn extensions(&self) -> &crate::ext::registry::Extensions {
        &self.exts
    }

    /// New, empty extension state, with state tables holding about
    /// `capacity` flows each (the default is `stateful::DEFAULT_CAPACITY`).
    /// Replicas made before keep the old state: call before making any.
    pub fn set_state_capacity(&mut self, capacity: usize) {
        self.state_capacity = capacity;
        self.make_hooks();
    }

    fn make_hooks(&mut self) {
        let tables = u8::try_from(self.tables.len()).unwrap_or(u8::MAX);
        self.hooks = crate::ext::registry::Hooks::new(&self.exts, tables, self.state_capacity);
    }

    /// `instructions` as an entry keeps them, and compiled; shared with a
    /// recent entry where it has the same (see `recent_programs`).
    pub(crate) fn program_for(
        &mut self,
        instructions: &[Instruction],
    ) -> (Arc<[Instruction]>, Arc<Program>) {
        let list_hash = self.recent_hasher.hash_one(instructions);
        let recent = &self.recent_programs;
        if let Some(r) = recent
            .iter()
            .rev()
            .find(|r| r.list_hash == list_hash && *r.list == *instructions)
        {
            return (r.list.clone(), r.program.clone());
        }
        let p = <FlowTable as TableKind>::compile(instructions, &self.exts);
        let program_hash = self.recent_hasher.hash_one(&p);
        let program = match recent
            .iter()
            .rev()
            .find(|r| r.program_hash == program_hash && *r.program == p)
        {
            Some(r) => r.program.clone(),
            None => Arc::new(p),
        };
        let list: Arc<[Instruction]> = Arc::from(instructions);
        if self.recent_programs.len() == RECENT_PROGRAMS {
            self.recent_programs.remove(0);
        }
        self.recent_programs.push(Recent {
            list_hash,
            list: list.clone(),
            program_hash,
            program: program.clone(),
        });
        (list, program)
    }

    /// Raises the parse depth to `layer` (see `parse_layer`).
    pub(crate) fn need_layer(&mut self, layer: Layer) {
        self.parse_layer = self.parse_layer.max(layer);
    }

    /// How deep a received frame is parsed now: what the installed rules
    /// need, and L3 when IP fragments are dropped.
    #[inline]
    pub fn parse_layer(&self) -> Layer {
        if self.ext_in_use() {
            // A state look-up or SET_STATE extracts its scope's fields,
            // any of which may be L4.
            Layer::L4
        } else if self.config.frag_drop {
            self.parse_layer.max(Layer::L3)
        } else {
            self.parse_layer
        }
    }

    /// Keeps (the default) or drops the lookup-only indexes of every
    /// table: the exact-match index (`classifier::exact`) and the LPM trie
    /// (`classifier::lpm`). Lookups give the same answers either way;
    /// without them a table is probed through the tuple space alone, which
    /// is slower per packet but saves the indexes' upkeep on every
    /// flow-mod (a cache miss into the exact index's slots, a trie walk)
    /// and their memory (a 75,000-prefix ACL's trie is about 50 MB). For a
    /// copy that processes few packets, such as the switch's
    /// control-thread pipeline beside the workers' replicas.
    pub fn set_lookup_indexes(&mut self, on: bool) {
        for t in &mut self.tables {
            t.set_lookup_indexes(on);
        }
    }

    pub fn n_tables(&self) -> usize {
        self.tables.len()
    }

    pub fn table(&self, id: u8) -> Option<&FlowTable> {
        self.tables.get(usize::from(id))
    }

    /// Puts back the tables the packet path moved out for a batch or a
    /// packet (`std::mem::take`, so that it can borrow them beside the
    /// rest of the pipeline), without calling the drop of the empty `Vec`
    /// that stood in for them: it owns no memory, and the call cost some
    /// 26 instructions, a tenth of a one-packet batch. (A stand-in that
    /// did get memory is dropped as usual.)
    #[inline(always)]
    pub(crate) fn put_tables_back(&mut self, tables: Vec<FlowTable>) {
        let stand_in = std::mem::replace(&mut self.tables, tables);
        if stand_in.capacity() == 0 {
            std::mem::forget(stand_in);
        }
    }

    pub fn table_mut(&mut self, id: u8) -> Option<&mut FlowTable> {
        self.tables.get_mut(usize::from(id))
    }

    pub fn tables(&self) -> &[FlowTable] {
        &self.tables
    }
}
