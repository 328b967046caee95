//! A thread's transmit handles ([`TxPorts`]; worker module comment,
//! "Transmit").

use super::tx_queue::TxQueues;
use super::SwitchPorts;
use ports::PortTx;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Transmit handles of one thread: a lock-free clone per port where the
/// backend has one ([`ports::Port::tx_clone`]); other ports are reached
/// through their shared mutex. A port with queues (`super::queues`) also
/// has one handle per queue, on a socket whose priority selects the
/// queue's qdisc class, with the queue's shared counters; a frame for a
/// queue the port does not have leaves by the port's default handle.
/// Each handle keeps its [`super::SwitchPort`] alive, so a port removed at
/// run time closes once every thread dropped its handles
/// ([`TxPorts::sync`]).
pub(crate) struct TxPorts {
    ports: SwitchPorts,
    own: BTreeMap<u32, (Arc<super::SwitchPort>, Box<dyn PortTx>)>,
    /// Queue handles by port, each list in queue id order.
    queued: BTreeMap<u32, Vec<QueueTx>>,
}

/// One queue's transmit handle (see [`TxPorts`]).
pub(crate) struct QueueTx {
    id: u32,
    tx: Box<dyn PortTx>,
    counters: Arc<super::queues::QueueCounters>,
}

impl TxPorts {
    pub fn new(ports: &SwitchPorts) -> TxPorts {
        let mut t = TxPorts {
            ports: ports.clone(),
            own: BTreeMap::new(),
            queued: BTreeMap::new(),
        };
        t.sync(ports);
        t
    }

    /// Adopts a new port set: opens handles for ports that are new (or
    /// were re-attached: another [`super::SwitchPort`] under the same
    /// number) and drops those of ports that are gone.
    pub fn sync(&mut self, ports: &SwitchPorts) {
        self.ports = ports.clone();
        self.own
            .retain(|no, (p, _)| ports.get(no).is_some_and(|now| Arc::ptr_eq(now, p)));
        let own = &self.own;
        self.queued.retain(|no, _| own.contains_key(no));
        for (no, p) in ports.iter() {
            if self.own.contains_key(no) {
                continue;
            }
            let tx = match p.io.lock() {
                Ok(io) => io.tx_clone().ok(),
                Err(_) => None,
            };
            if let Some(tx) = tx {
                self.own.insert(*no, (p.clone(), tx));
            }
        }
    }

    /// Opens one handle per queue of port `no` (replacing its previous
    /// queue handles); an empty `queues` leaves it with its default handle
    /// only. The error names the queue the backend could not serve.
    pub fn set_queues(
        &mut self,
        no: u32,
        queues: &super::queues::PortQueues,
    ) -> Result<(), String> {
        self.queued.remove(&no);
        if queues.is_empty() {
            return Ok(());
        }
        let Some(p) = self.ports.get(&no) else {
            return Err(format!("no port {no}"));
        };
        let io = p.io.lock().map_err(|_| format!("port {no}: poisoned"))?;
        let mut list = Vec::with_capacity(queues.queues.len());
        for q in &queues.queues {
            let tx = io
                .tx_clone_priority(super::queues::priority(q.spec.id))
                .map_err(|e| format!("queue {}: {e}", q.spec.id))?;
            list.push(QueueTx {
                id: q.spec.id,
                tx,
                counters: q.counters.clone(),
            });
        }
        drop(io);
        self.queued.insert(no, list);
        Ok(())
    }

    /// Sends every queued frame, at most [`ports::BATCH`] per `tx_batch`
    /// call (drops are counted by the port, and by the queue if it has
    /// one), and empties the queues.
    pub fn flush(&mut self, queues: &mut TxQueues) {
        for (no, queue_id, q) in queues.iter_mut() {
            if q.len == 0 {
                continue;
            }
            for chunk in q.frames().chunks(ports::BATCH) {
                let mut slices: [&[u8]; ports::BATCH] = [&[]; ports::BATCH];
                for (s, f) in slices.iter_mut().zip(chunk) {
                    *s = f.as_slice();
                }
                self.send(no, queue_id, &slices[..chunk.len()]);
            }
            q.clear();
        }
    }

    /// Whether port `no` is in the set.
    #[inline]
    pub fn has(&self, no: u32) -> bool {
        self.ports.contains_key(&no)
    }

    /// Sends up to [`ports::BATCH`] frames on port `no`'s queue `queue_id`
    /// (its default handle if it has no such queue).
    #[inline]
    pub fn send(&mut self, no: u32, queue_id: u32, slices: &[&[u8]]) {
        let qtx = self
            .queued
            .get_mut(&no)
            .and_then(|l| l.iter_mut().find(|h| h.id == queue_id));
        if let Some(h) = qtx {
            let sent = h.tx.tx_batch(slices).unwrap_or(0);
            let bytes: u64 = slices.iter().take(sent).map(|f| f.len() as u64).sum();
            h.counters.count(sent, slices.len(), bytes);
        } else if let Some((_, tx)) = self.own.get_mut(&no) {
            let _ = tx.tx_batch(slices);
        } else if let Some(p) = self.ports.get(&no) {
            if let Ok(mut io) = p.io.lock() {
                let _ = io.tx_batch(slices);
            }
        }
    }

    /// Ports transmitted to without a lock.
    #[cfg(test)]
    pub fn lock_free(&self) -> usize {
        self.own.len()
    }
}
