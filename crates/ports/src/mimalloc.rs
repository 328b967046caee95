//! The `oxflow` binary's global allocator: mimalloc, called so that an
//! ordinary Rust allocation takes mimalloc's plain (fast) path.
//!
//! # Why not the `mimalloc` crate's `MiMalloc`
//!
//! That wrapper sends every allocation to `mi_malloc_aligned(size, align)`,
//! whatever the alignment. In mimalloc 3 (what `libmimalloc-sys` 0.1.49
//! builds), the aligned call only takes its fast path when the size
//! class's page happens to have a free block at a suitable address; when
//! the page's free list is empty it goes to the generic aligned path, which
//! *over-allocates* `size + align - 1` bytes from the next size class and
//! never refills the first page's list, so one size keeps taking the slow
//! path. Installing 110,000 gateway flows into a pipeline made 1.59M
//! allocation calls, 758K of them through that path at about 170
//! instructions each (callgrind), and the over-allocation spent memory
//! that a first touch in a VM pays for (page faults were about 40 % of
//! the switch's CPU time in a 100K-flow install).
//!
//! # Which calls are plain
//!
//! mimalloc's size classes on x86_64 (and every 64-bit target: its
//! `MI_MAX_ALIGN_SIZE` is 16, two words) are 8 bytes and then multiples
//! of 16 bytes, and the first block of every page is 16-byte aligned
//! (`MI_PAGE_MIN_START_BLOCK_ALIGN`). So `mi_malloc(size)` returns an
//! address aligned to 16 when `size` is above 8, and to 8 otherwise. A
//! layout whose alignment is at most 16 and divides its size (every Rust
//! type's layout does: `size_of` is a multiple of `align_of`) is therefore
//! served by `mi_malloc` / `mi_zalloc` / `mi_realloc`; anything else
//! (a 64-byte aligned `HotEntry` vector, odd raw layouts) keeps the
//! aligned calls. `mi_free` and `mi_realloc` take a pointer from either
//! kind of call. The tests below check the alignment of every size up to
//! 4 KiB and of large blocks.
//!
//! # Big blocks: mappings of their own, grown in place
//!
//! mimalloc grows a block by allocating a new one, copying and freeing
//! the old (`_mi_theap_realloc_zero`). A flow table's arrays (entry
//! records, positions, the order of entries) grow by doubling while
//! 100,000 flows come in, and each doubling then copies the whole array
//! into fresh memory: in this VM the first touch of memory is what an
//! install costs most (page faults were about 40 % of the switch's CPU
//! time), and the copy touches as many fresh bytes as the array holds.
//!
//! So a block that `realloc` grows to at least [`BIG`] bytes (alignment
//! at most a page) becomes a private anonymous mapping of its own (one
//! copy, the last), its length rounded up to whole huge pages (so the
//! kernel places it on a huge-page boundary) and marked `MADV_HUGEPAGE`
//! (as mimalloc marks its arenas). Growing or shrinking a mapping is
//! `mremap(MREMAP_MAYMOVE)`: the kernel moves the page tables, so no
//! byte is copied and no page touched; only the new tail is touched,
//! when it is filled. Freeing one is `munmap`; shrinking one below `BIG`
//! moves it back to mimalloc with one copy.
//!
//! Big blocks made by `alloc` stay mimalloc's: a hash table grows by
//! allocating a new table and freeing the old one, and mimalloc hands
//! freed memory (already touched) out again, where a fresh mapping
//! would be touched anew (an install of 100,000 ACL rules, whose
//! classifier grows many hash tables, took 25 % longer when every big
//! block was a mapping).
//!
//! Which big blocks are mappings is kept in a registry ([`Mappings`]: a
//! fixed array behind a lock, so that it never allocates), consulted
//! only by `dealloc` and `realloc` of big layouts (a few calls per
//! doubling). When it is full, blocks stay mimalloc's.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Alignment every plain mimalloc block of more than 8 bytes has.
const PLAIN_ALIGN: usize = 16;

/// Smallest block `realloc` makes a mapping of its own (module comment):
/// one huge page.
const BIG: usize = 2 << 20;

/// The unit a mapping's length is rounded up to: a huge page, so that the
/// kernel aligns the mapping for transparent huge pages.
const HUGE_PAGE: usize = 2 << 20;

/// The largest alignment a mapping is sure to have (a base page).
const PAGE: usize = 4096;

/// Whether a block of this layout may be a mapping (module comment).
#[inline(always)]
fn big(size: usize, align: usize) -> bool {
    size >= BIG && align <= PAGE
}

/// The length of the mapping of a block of `size` bytes. (`size` is at
/// most `isize::MAX`, a `Layout` guarantees it, so the rounding cannot
/// overflow.)
#[inline(always)]
fn map_len(size: usize) -> usize {
    size.next_multiple_of(HUGE_PAGE)
}

/// Most mappings alive at once (module comment): each is a big array, so
/// a switch has a few per flow table and worker.
const MAPPINGS: usize = 1024;

/// The addresses of the live mappings: `addr[..n]`, in no order. Behind
/// a lock and of fixed size, so that the allocator never allocates for
/// it; searched linearly, by `dealloc` and `realloc` of big layouts only.
struct Mappings {
    addr: [usize; MAPPINGS],
    n: usize,
}

static MAPPED: std::sync::Mutex<Mappings> = std::sync::Mutex::new(Mappings {
    addr: [0; MAPPINGS],
    n: 0,
});

/// The registry, whatever a panicking holder left (nothing can panic
/// while it is held, and its state is valid between any two statements).
fn mapped() -> std::sync::MutexGuard<'static, Mappings> {
    MAPPED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Mappings {
    fn position(&self, p: *mut u8) -> Option<usize> {
        self.addr[..self.n].iter().position(|&a| a == p as usize)
    }

    /// Takes `p` out; whether it was there.
    fn take(&mut self, p: *mut u8) -> bool {
        let Some(i) = self.position(p) else {
            return false;
        };
        self.n -= 1;
        self.addr[i] = self.addr[self.n];
        true
    }
}

/// Maps a block of `size` bytes (zeroed, as every fresh anonymous mapping
/// is); null when the kernel refuses.
#[cold]
fn map_big(size: usize) -> *mut u8 {
    let len = map_len(size);
    // SAFETY: a new private anonymous mapping, no address hint: it
    // touches no memory of the process.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    // SAFETY: advice on the mapping just made; a refusal (no THP in this
    // kernel) changes nothing, so the result is ignored.
    unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) };
    p as *mut u8
}

/// Unmaps a block of `size` bytes made by `map_big` or `remap_big`.
///
/// # Safety
/// `p` is such a block, of that size, and is not used afterwards.
#[cold]
unsafe fn unmap_big(p: *mut u8, size: usize) {
    // SAFETY: the caller's promise; the length is the one mapped.
    unsafe { libc::munmap(p as *mut c_void, map_len(size)) };
}

/// Grows or shrinks a mapped block of `old` bytes to `new` bytes (both
/// big) in place or by moving its pages (no copy); null when the kernel
/// refuses (the block is then unchanged).
///
/// # Safety
/// `p` is a block of `old` bytes made by `map_big` or `remap_big`.
#[cold]
unsafe fn remap_big(p: *mut u8, old: usize, new: usize) -> *mut u8 {
    let (from, to) = (map_len(old), map_len(new));
    if from == to {
        return p;
    }
    // SAFETY: the caller's promise; the lengths are the mapped ones, and
    // MREMAP_MAYMOVE lets the kernel move the pages (the old address is
    // then no longer mapped, which the caller knows from the result).
    let q = unsafe { libc::mremap(p as *mut c_void, from, to, libc::MREMAP_MAYMOVE) };
    if q == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    q as *mut u8
}

/// mimalloc as a [`GlobalAlloc`], plain calls where they are enough (module
/// comment). Install with
/// `#[global_allocator] static A: ports::mimalloc::Mimalloc = ports::mimalloc::Mimalloc;`.
pub struct Mimalloc;

/// Whether a plain mimalloc call of `size` bytes is aligned enough for
/// `align`.
#[inline(always)]
fn plain(size: usize, align: usize) -> bool {
    align <= PLAIN_ALIGN && size.is_multiple_of(align)
}

impl Mimalloc {
    /// A plain or aligned mimalloc block for `layout` (module comment).
    ///
    /// # Safety
    /// `layout` has a non-zero size.
    #[inline(always)]
    unsafe fn mi_alloc(layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        // SAFETY: plain FFI calls with no pointer arguments.
        unsafe {
            if plain(size, align) {
                mi::mi_malloc(size) as *mut u8
            } else {
                mi::mi_malloc_aligned(size, align) as *mut u8
            }
        }
    }

    /// `realloc` of a block that may be a mapping (`big(layout)`).
    ///
    /// # Safety
    /// As `GlobalAlloc::realloc`.
    #[cold]
    #[inline(never)]
    unsafe fn realloc_big(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        let mut reg = mapped();
        let mapping = big(size, align).then(|| reg.position(ptr)).flatten();
        let to_big = big(new_size, align);
        match mapping {
            // A mapping stays one: its pages move.
            Some(i) if to_big => {
                // SAFETY: a registered mapping of `size` bytes.
                let q = unsafe { remap_big(ptr, size, new_size) };
                if !q.is_null() {
                    reg.addr[i] = q as usize;
                }
                q
            }
            // A mapping shrunk below `BIG` goes back to mimalloc.
            Some(_) => {
                drop(reg);
                // SAFETY: a non-zero new size (GlobalAlloc contract).
                let q =
                    unsafe { Self::mi_alloc(Layout::from_size_align_unchecked(new_size, align)) };
                if !q.is_null() {
                    // SAFETY: both blocks hold `new_size` bytes; the
                    // mapping is registered and of `size` bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, q, new_size);
                        let mut reg = mapped();
                        reg.take(ptr);
                        unmap_big(ptr, size);
                    }
                }
                q
            }
            // A mimalloc block grown to `BIG` or more becomes a mapping
            // (one copy), when the registry has room.
            None if to_big && new_size > size && reg.n < MAPPINGS => {
                let q = map_big(new_size);
                if !q.is_null() {
                    let n = reg.n;
                    reg.addr[n] = q as usize;
                    reg.n += 1;
                    drop(reg);
                    // SAFETY: the old block holds `size` bytes, the new
                    // one more; the old one is mimalloc's.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, q, size);
                        mi::mi_free(ptr as *mut c_void);
                    }
                }
                q
            }
            None => {
                drop(reg);
                // SAFETY: a mimalloc block (as `realloc` below).
                unsafe { Self::mi_realloc(ptr, align, new_size) }
            }
        }
    }

    /// `dealloc` of a block that may be a mapping (`big(layout)`): out of
    /// line, so that every inlined `dealloc` (each `Vec`'s drop) stays a
    /// compare and a call.
    ///
    /// # Safety
    /// As `GlobalAlloc::dealloc`.
    #[cold]
    #[inline(never)]
    unsafe fn dealloc_big(ptr: *mut u8, layout: Layout) {
        if mapped().take(ptr) {
            // SAFETY: a registered mapping, of the layout's size (the
            // caller passes the block's layout), no longer registered.
            unsafe { unmap_big(ptr, layout.size()) };
        } else {
            // SAFETY: a block this allocator returned that is not a
            // mapping: mimalloc's.
            unsafe { mi::mi_free(ptr as *mut c_void) }
        }
    }

    /// mimalloc's realloc, plain when its alignment covers `align` for
    /// `new_size` (module comment).
    ///
    /// # Safety
    /// `ptr` is a mimalloc block; `new_size` is non-zero.
    #[inline(always)]
    unsafe fn mi_realloc(ptr: *mut u8, align: usize, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's promise.
        unsafe {
            if plain(new_size, align) {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, align) as *mut u8
            }
        }
    }
}

// SAFETY: blocks are mimalloc's, which returns blocks of at least the
// requested size or null, a plain call being made only when its natural
// alignment covers `layout.align()` (module comment), otherwise the
// aligned call; except a block `realloc` grows to a big size, which
// becomes a mapping of at least that size, page-aligned (`big` asks for
// at most a page), registered in `MAPPED` until it is freed or shrunk
// back. `dealloc` and `realloc` look a big layout's block up there to
// know its kind; `mi_free` and `mi_realloc*` accept a pointer from any
// mimalloc allocation call.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: a non-zero size (GlobalAlloc contract).
        unsafe { Self::mi_alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        // SAFETY: plain FFI calls with no pointer arguments.
        unsafe {
            if plain(size, align) {
                mi::mi_zalloc(size) as *mut u8
            } else {
                mi::mi_zalloc_aligned(size, align) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if big(layout.size(), layout.align()) {
            // SAFETY: the caller's promise (GlobalAlloc contract).
            unsafe { Self::dealloc_big(ptr, layout) };
            return;
        }
        // SAFETY: the caller passes a block this allocator returned; a
        // layout that is not big is never a mapping: mimalloc's.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        if big(layout.size(), align) || big(new_size, align) {
            // SAFETY: the caller's promise (GlobalAlloc contract).
            return unsafe { self.realloc_big(ptr, layout, new_size) };
        }
        // SAFETY: neither size is big, so the block is mimalloc's; the
        // new size is non-zero (GlobalAlloc contract).
        unsafe { Self::mi_realloc(ptr, align, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        /// The bytes usable in a mimalloc block (in the C library whatever
        /// the crate's features).
        fn mi_usable_size(p: *const c_void) -> usize;
    }

    /// The byte offsets `check` writes and reads: all of a small block,
    /// one per 4 KiB page and the last of a large one.
    fn sample(size: usize) -> impl Iterator<Item = usize> {
        let step = if size <= 8192 { 1 } else { 4093 };
        (0..size).step_by(step).chain(std::iter::once(size - 1))
    }

    /// Allocates `size` bytes aligned to `align` every way, checks the
    /// address and that the bytes survive a reallocation.
    fn check(size: usize, align: usize) {
        let a = Mimalloc;
        let Ok(layout) = Layout::from_size_align(size, align) else {
            return;
        };
        // SAFETY: a non-zero size; each block is freed with its layout.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null(), "alloc {size}/{align}");
            assert_eq!(p as usize % align, 0, "alloc {size}/{align} at {p:p}");
            for i in sample(size) {
                *p.add(i) = i as u8;
            }
            let grown = size * 2 + 8;
            let q = a.realloc(p, layout, grown);
            assert!(!q.is_null(), "realloc {size}/{align}");
            assert_eq!(q as usize % align, 0, "realloc {size}/{align} at {q:p}");
            for i in sample(size) {
                assert_eq!(*q.add(i), i as u8, "realloc {size}/{align} byte {i}");
            }
            let shrunk = size.div_ceil(2).max(1);
            let r = a.realloc(q, Layout::from_size_align_unchecked(grown, align), shrunk);
            assert_eq!(r as usize % align, 0, "shrink {size}/{align} at {r:p}");
            for i in sample(size).filter(|&i| i < shrunk) {
                assert_eq!(*r.add(i), i as u8, "shrink {size}/{align} byte {i}");
            }
            a.dealloc(r, Layout::from_size_align_unchecked(shrunk, align));
            let z = a.alloc_zeroed(layout);
            assert_eq!(
                z as usize % align,
                0,
                "alloc_zeroed {size}/{align} at {z:p}"
            );
            assert!(
                sample(size).all(|i| *z.add(i) == 0),
                "alloc_zeroed {size}/{align}"
            );
            a.dealloc(z, layout);
        }
    }

    #[test]
    fn every_small_size_is_aligned_as_asked() {
        for align in [1, 2, 4, 8, 16, 32, 64, 128, 4096] {
            for size in (1..=1024).chain((1025..=4096).step_by(7)) {
                check(size, align);
            }
        }
    }

    #[test]
    fn large_blocks_are_aligned_as_asked() {
        // Mimalloc's blocks, big ones (mappings) and blocks that cross
        // `BIG` on the grow or the shrink; 8192 is beyond a mapping's
        // alignment, so those stay with mimalloc's aligned calls.
        let _m = maps();
        for align in [8, 16, 64, 4096, 8192] {
            for size in [64 << 10, (1 << 20) + 48, BIG - 16, BIG, 9 << 20, 40 << 20] {
                check(size, align);
            }
        }
    }

    /// Held by the tests that make mappings, so that none sees another's
    /// mapping take an address one of its own just gave up (the tests
    /// call `Mimalloc` directly; it is not the tests' global allocator).
    static MAPS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn maps() -> std::sync::MutexGuard<'static, ()> {
        MAPS.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Minor page faults of the calling thread so far.
    fn minor_faults() -> i64 {
        // SAFETY: `getrusage` fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_THREAD is Linux's, this thread only.
        let r = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        assert_eq!(r, 0, "getrusage");
        u.ru_minflt
    }

    #[test]
    fn growing_a_big_block_copies_nothing() {
        // A `Vec`'s doublings: 1 MiB (mimalloc's), then 32 MiB (a
        // mapping now, the last copy), every page touched, then 64 MiB:
        // the pages move, none is touched, so that grow takes (next to)
        // no page fault. Growing by a copy into fresh memory would fault
        // at least once per huge page of the 32 MiB (16), and once per
        // 4 KiB page (8,192) without huge pages.
        let _m = maps();
        let a = Mimalloc;
        let small = Layout::from_size_align(1 << 20, 8).expect("layout");
        let size = 32 << 20;
        // SAFETY: non-zero sizes; each block is used and freed with its
        // current layout.
        unsafe {
            let p = a.alloc(small);
            assert!(!p.is_null());
            *p = 42;
            let p = a.realloc(p, small, size);
            assert!(!p.is_null());
            assert_eq!(*p, 42);
            for i in (0..size).step_by(4096) {
                *p.add(i) = (i >> 12) as u8;
            }
            let before = minor_faults();
            let q = a.realloc(p, Layout::from_size_align_unchecked(size, 8), 2 * size);
            let faults = minor_faults() - before;
            assert!(!q.is_null());
            assert!(faults < 8, "{faults} page faults growing a big block");
            for i in (0..size).step_by(4096) {
                assert_eq!(*q.add(i), (i >> 12) as u8, "byte {i}");
            }
            // The new half is there, zeroed, and writable.
            assert_eq!(*q.add(2 * size - 1), 0);
            *q.add(2 * size - 1) = 7;
            a.dealloc(q, Layout::from_size_align_unchecked(2 * size, 8));
        }
    }

    #[test]
    fn mappings_are_registered_while_they_live() {
        // Blocks grown to `BIG` are registered; freeing or shrinking one
        // below `BIG` takes it out; a big block `alloc` made (mimalloc's)
        // never is.
        let _m = maps();
        let a = Mimalloc;
        let one = Layout::from_size_align(1 << 20, 16).expect("layout");
        // SAFETY: non-zero sizes; each block is freed with its layout.
        unsafe {
            let m = a.alloc(Layout::from_size_align_unchecked(BIG * 2, 16));
            assert!(mapped().position(m).is_none(), "alloc made a mapping");
            a.dealloc(m, Layout::from_size_align_unchecked(BIG * 2, 16));
            let p = a.realloc(a.alloc(one), one, BIG);
            assert!(mapped().position(p).is_some(), "not registered");
            let q = a.realloc(p, Layout::from_size_align_unchecked(BIG, 16), BIG * 3);
            assert!(mapped().position(q).is_some(), "lost on remap");
            let r = a.realloc(q, Layout::from_size_align_unchecked(BIG * 3, 16), 4096);
            assert!(mapped().position(r).is_none(), "kept after the shrink");
            a.dealloc(r, Layout::from_size_align_unchecked(4096, 16));
            let p = a.realloc(a.alloc(one), one, BIG + 1);
            a.dealloc(p, Layout::from_size_align_unchecked(BIG + 1, 16));
            assert!(mapped().position(p).is_none(), "kept after the free");
        }
    }

    #[test]
    fn rust_layouts_take_the_plain_path() {
        // The aligned path over-allocates from the next size class, so a
        // block's usable size tells the paths apart: every 48-byte block
        // with alignment 16 (a `FieldMatch`-like layout) must be exactly
        // 48 bytes, the plain size class.
        let a = Mimalloc;
        for (size, align) in [(48, 16), (80, 16), (24, 8), (40, 8), (112, 16)] {
            let layout = Layout::from_size_align(size, align).expect("layout");
            // SAFETY: non-zero sizes; all blocks freed below.
            let blocks: Vec<*mut u8> = (0..10_000).map(|_| unsafe { a.alloc(layout) }).collect();
            for p in &blocks {
                // SAFETY: a live block of this allocator.
                let usable = unsafe { mi_usable_size(*p as *const c_void) };
                assert_eq!(
                    usable,
                    size.next_multiple_of(16).max(size),
                    "{size}/{align}"
                );
            }
            for p in blocks {
                // SAFETY: allocated above with `layout`.
                unsafe { a.dealloc(p, layout) };
            }
        }
    }

    #[test]
    fn many_live_blocks_of_one_size_stay_aligned() {
        // The pathology this allocator avoids shows with many blocks of
        // one odd size class alive at once; their addresses must all be
        // aligned whichever path served them.
        let a = Mimalloc;
        for (size, align) in [(48, 16), (80, 16), (24, 8), (112, 16), (40, 8)] {
            let layout = Layout::from_size_align(size, align).expect("layout");
            // SAFETY: non-zero sizes; all blocks freed below.
            let blocks: Vec<*mut u8> = (0..10_000).map(|_| unsafe { a.alloc(layout) }).collect();
            for p in &blocks {
                assert!(!p.is_null());
                assert_eq!(*p as usize % align, 0, "{size}/{align} at {p:p}");
            }
            for p in blocks {
                // SAFETY: allocated above with `layout`.
                unsafe { a.dealloc(p, layout) };
            }
        }
    }
}
