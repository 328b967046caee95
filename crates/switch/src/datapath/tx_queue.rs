//! What the control thread's own runs of the pipeline emit (packet-out,
//! the buffered packet of a flow-mod): frames queued per port
//! ([`TxQueues`], transmitted at once by `Datapath::run_on_control`),
//! packet-ins and the learning switch ([`ControlOut`]).

/// Frames queued for one port during a batch. `frames[..len]` are queued;
/// the buffers beyond `len` are kept, with their capacity, for the next
/// batch, so a warm queue copies frames without allocating.
#[derive(Debug, Default)]
pub(crate) struct TxQueue {
    frames: Vec<Vec<u8>>,
    pub(super) len: usize,
}

impl TxQueue {
    /// Room reserved per frame buffer (a full-size frame).
    const FRAME_CAPACITY: usize = 2048;

    pub fn push(&mut self, data: &[u8]) {
        if self.len == self.frames.len() {
            self.frames
                .push(Vec::with_capacity(Self::FRAME_CAPACITY.max(data.len())));
        }
        if let Some(f) = self.frames.get_mut(self.len) {
            f.clear();
            f.extend_from_slice(data);
            self.len += 1;
        }
    }

    /// The queued frames.
    pub fn frames(&self) -> &[Vec<u8>] {
        &self.frames[..self.len]
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// A worker's transmit queues, by port number and queue id (0 for frames
/// without set-queue): a small vector of `(port, queue, frames)` in the
/// order they were first output to (an entry is created the first time
/// and then kept, so a warm worker allocates nothing). A switch has a
/// handful of ports and a batch usually outputs to one or two of them, so
/// a linear search that starts at the last entry used beats a tree or
/// hash look-up per output.
#[derive(Debug, Default)]
pub(crate) struct TxQueues {
    queues: Vec<(u32, u32, TxQueue)>,
    /// Index of the queue used last (the first one tried).
    last: usize,
}

impl TxQueues {
    pub fn new() -> TxQueues {
        TxQueues::default()
    }

    /// The frames for queue `queue_id` of `port`, created empty if there
    /// are none yet.
    pub fn queue(&mut self, port: u32, queue_id: u32) -> &mut TxQueue {
        let i = match self.queues.get(self.last) {
            Some((no, q, _)) if *no == port && *q == queue_id => self.last,
            _ => match self
                .queues
                .iter()
                .position(|(no, q, _)| *no == port && *q == queue_id)
            {
                Some(i) => i,
                None => {
                    self.queues.push((port, queue_id, TxQueue::default()));
                    self.queues.len() - 1
                }
            },
        };
        self.last = i;
        &mut self.queues[i].2
    }

    /// Every queue with its port number and queue id.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, u32, &mut TxQueue)> {
        self.queues.iter_mut().map(|(no, q, f)| (*no, *q, f))
    }
}

/// The control thread's [`pipeline::Output`] (module comment).
pub(crate) struct ControlOut<'a> {
    pub queues: &'a mut TxQueues,
    pub events: &'a super::worker::PacketInSender,
    pub counters: &'a super::ops::WorkerCounters,
    pub learning: &'a super::LearningTable,
    /// The clock's time of the run (the learning switch's stamps).
    pub now: pipeline::Nanos,
}

impl pipeline::Output for ControlOut<'_> {
    fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>) {
        self.queues.queue(port, queue.unwrap_or(0)).push(data);
    }

    fn packet_in(&mut self, ev: pipeline::PacketInEvent<'_>) {
        self.events.packet_in(ev, self.counters);
    }

    /// OFPP_NORMAL: the learning switch.
    fn normal(&mut self, in_port: u32, data: &[u8], ports: &pipeline::PortTable) {
        let queues = &mut *self.queues;
        self.learning.forward(in_port, data, ports, self.now, |p| {
            queues.queue(p, 0).push(data)
        });
    }
}
