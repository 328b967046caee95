//! STATE_CHANGED notifications: the state transitions SET_STATE actions
//! make in the data path, on their way to the controllers.
//!
//! # The queue
//!
//! Workers record a transition as a [`StateEvent`] (a fixed-size `Copy`
//! value: the key is a [`KeyBuf`], not a `Vec`) in one bounded lock-free
//! queue shared by every replica (`crossbeam_queue::ArrayQueue`, its slots
//! allocated once with the [`crate::Stateful`]). Pushing never blocks and
//! never allocates; when the queue is full the event is dropped and
//! counted ([`Notifications::dropped`]). The control thread drains the
//! queue and turns each event into the experimenter message
//! ([`StateEvent::to_message`]), so the allocation happens there.
//!
//! What emits an event is the BEBA switch's rule (built with its state
//! notifications on): a SET_STATE action that changed the flow's state.
//! SET_FLOW_STATE from a controller, INC_STATE and timeouts rolling a
//! state back emit none.

use crossbeam_queue::ArrayQueue;
use ofp::beba::StateChanged;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::key::KeyBuf;

/// How many events wait for the control thread at most (it drains them
/// every few milliseconds).
pub const QUEUE_CAPACITY: usize = 1024;

/// One state transition (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateEvent {
    pub table_id: u8,
    pub old_state: u32,
    pub new_state: u32,
    /// The mask of the transition that made it.
    pub state_mask: u32,
    /// The flow's key in the update scope it was written with.
    pub key: KeyBuf,
}

impl StateEvent {
    /// The STATE_CHANGED message. Its key is the flow's key, `key_len`
    /// its length (the BEBA switch pads every key to 48 bytes;
    /// `docs/beba.md`).
    pub fn to_message(&self) -> StateChanged {
        StateChanged {
            table_id: u32::from(self.table_id),
            old_state: self.old_state,
            new_state: self.new_state,
            state_mask: self.state_mask,
            key: self.key.as_bytes().to_vec(),
        }
    }
}

/// The queue of [`StateEvent`]s (module comment).
#[derive(Debug)]
pub struct Notifications {
    queue: ArrayQueue<StateEvent>,
    dropped: AtomicU64,
}

impl Default for Notifications {
    fn default() -> Self {
        Notifications::new(QUEUE_CAPACITY)
    }
}

impl Notifications {
    pub fn new(capacity: usize) -> Notifications {
        Notifications {
            queue: ArrayQueue::new(capacity.max(1)),
            dropped: AtomicU64::new(0),
        }
    }

    /// Queues `ev`; drops and counts it when the queue is full.
    #[inline]
    pub fn push(&self, ev: StateEvent) {
        if self.queue.push(ev).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Takes every queued event, oldest first.
    pub fn drain(&self, mut f: impl FnMut(StateEvent)) {
        while let Some(ev) = self.queue.pop() {
            f(ev);
        }
    }

    /// Events dropped because the queue was full, since the start.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(n: u32) -> StateEvent {
        StateEvent {
            table_id: 1,
            old_state: 0,
            new_state: n,
            state_mask: u32::MAX,
            key: KeyBuf::from_bytes(&[10, 0, 0, 1]).expect("key"),
        }
    }

    #[test]
    fn full_queue_drops_and_counts() {
        let q = Notifications::new(2);
        for n in 1..=5 {
            q.push(ev(n));
        }
        assert_eq!(q.dropped(), 3);
        let mut got = Vec::new();
        q.drain(|e| got.push(e.new_state));
        assert_eq!(got, [1, 2], "the oldest kept, in order");
        q.push(ev(6));
        q.drain(|e| got.push(e.new_state));
        assert_eq!(got, [1, 2, 6]);
    }

    #[test]
    fn message_carries_the_key() {
        let m = ev(7).to_message();
        assert_eq!((m.table_id, m.old_state, m.new_state), (1, 0, 7));
        assert_eq!(m.key, [10, 0, 0, 1]);
        let mut w = Vec::new();
        m.encode(&mut w);
        assert_eq!(StateChanged::decode(&w), Ok(m));
    }
}
