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

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Alignment every plain mimalloc block of more than 8 bytes has.
const PLAIN_ALIGN: usize = 16;

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

// SAFETY: every method forwards to mimalloc, which returns blocks of at
// least the requested size or null; a plain call is made only when its
// natural alignment covers `layout.align()` (module comment), otherwise
// the aligned call is made. `mi_free` and `mi_realloc*` accept a pointer
// from any mimalloc allocation call.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
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
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: the caller passes a block this allocator returned.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        // SAFETY: the caller passes a block this allocator returned, and
        // the new size is non-zero (GlobalAlloc contract); the plain call
        // is made only when its alignment covers `align` for `new_size`.
        unsafe {
            if plain(new_size, align) {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, align) as *mut u8
            }
        }
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
        for align in [8, 16, 64, 4096] {
            for size in [64 << 10, (1 << 20) + 48, 9 << 20, 40 << 20] {
                check(size, align);
            }
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
