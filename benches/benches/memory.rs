//! Peak heap growth while the guard judges hostile bodies, against the 4096-byte limit of
//! the contract: memory is bounded by the limit, not by what the upstream sends. Run with
//! `cargo bench -p airlock-benches --bench memory`; it prints one line per input.

use airlock_benches::{bench_contract, bulk_body, bulk_request};
use airlock_guard::Guard;
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are
// only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const HUNDRED_MB: u64 = 100 * 1024 * 1024;

fn measure(name: &str, f: &mut dyn FnMut()) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    f();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    println!("memory: {name}: peak heap growth {peak} bytes (max_bytes = 4096)");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks; there is nothing to list.
    }
    let guard = Guard::new(bench_contract("bulk_status"));
    let request = bulk_request();
    let valid = bulk_body("bulk_status", 4096);
    measure("valid_4k_body", &mut || {
        drop(black_box(guard.admit(&request, &valid)))
    });
    measure("body_100mb_reader", &mut || {
        drop(black_box(guard.admit_reader(
            &request,
            std::io::repeat(b' ').take(HUNDRED_MB),
        )));
    });
    measure("brackets_10m_reader", &mut || {
        drop(black_box(guard.admit_reader(
            &request,
            std::io::repeat(b'[').take(10_000_000),
        )));
    });
    let brackets = vec![b'['; 4096];
    measure("brackets_4k_within_limit", &mut || {
        drop(black_box(guard.admit(&request, &brackets)))
    });
}
