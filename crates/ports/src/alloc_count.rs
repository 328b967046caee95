//! A counting global allocator for tests that prove a code path does not
//! allocate (the forwarding loop's promise: no heap allocation per packet).
//!
//! Install it in a test binary with
//! `#[global_allocator] static A: ports::alloc_count::Counting = ports::alloc_count::Counting;`
//! and wrap the code under test in [`count`]. Only allocations made by the
//! calling thread while inside [`count`] are counted, so other test threads
//! and the test's own set-up do not disturb the figure. It lives in `ports`
//! because implementing `GlobalAlloc` takes `unsafe`, which oxflow keeps in
//! this crate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Whether this thread is inside `count`, and what it counted so far.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting allocations (and reallocations) of the
/// threads that are inside [`count`].
pub struct Counting;

fn note() {
    // `try_with`: thread-local storage may already be gone while a thread
    // exits; such allocations are not counted.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the bookkeeping only touches const-initialised
// thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: `ptr` came from this allocator (i.e. from `System`) with
        // `layout`, as our caller guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `f` and returns its result with the number of heap allocations the
/// calling thread made meanwhile (0 unless [`Counting`] is the global
/// allocator).
pub fn count<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = COUNT.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (r, COUNT.with(Cell::get) - before)
}
