//! Bounded waiting of the fair RON variants, measured exactly.
//!
//! Every thread contends continuously. Inside its critical section each
//! acquisition takes a number from a shared counter. A thread reads the
//! counter at the moment it is *registered* (the locks' test hook
//! `acquire_in_observed` calls back right after registration), so the
//! numbers taken between that read and its own acquisition are exactly the
//! acquisitions that overtook it, plus possibly the holder at registration
//! time. The maximum over all acquisitions must respect the documented
//! bound + 1 for that holder. Preemption cannot inflate the count: it is
//! taken from registration, not from a clock.

use std::sync::atomic::{AtomicU64, Ordering};

use ron_core::relax::Yield;
use ron_core::{NxtRonInline, PlaceToken, Ron, RonPlockInline, RonTicketInline};

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `threads` threads, each acquiring `iters` times in slot
/// `slot_of(thread)`, and returns the largest number of overtakes seen.
fn max_overtakes(
    threads: usize,
    iters: usize,
    slot_of: impl Fn(usize) -> usize + Sync,
    acquire: impl Fn(usize, &mut dyn FnMut()) -> PlaceToken + Sync,
    release: impl Fn(PlaceToken) + Sync,
) -> u64 {
    let counter = AtomicU64::new(0);
    let worst = AtomicU64::new(0);
    let start_line = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (counter, worst, slot_of, acquire, release, start_line) =
                (&counter, &worst, &slot_of, &acquire, &release, &start_line);
            s.spawn(move || {
                start_line.wait();
                for _ in 0..iters {
                    let mut start = 0;
                    // SeqCst: the read must be ordered with the
                    // registration that just happened (a SeqCst RMW or a
                    // store the lock made before calling back).
                    let tok = acquire(slot_of(t), &mut || start = counter.load(Ordering::SeqCst));
                    let mine = counter.fetch_add(1, Ordering::SeqCst);
                    worst.fetch_max(mine - start, Ordering::Relaxed); // a max, no data
                    release(tok);
                }
            });
        }
    });
    worst.load(Ordering::Relaxed)
}

macro_rules! bound_test {
    ($name:ident, $lock:ty, threads = $t:expr, slot = $slot:expr, bound = $bound:expr) => {
        #[test]
        fn $name() {
            // One test at a time: each needs both CPUs to build real queues.
            let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
            let lock = <$lock>::new();
            let threads: usize = $t;
            let worst = max_overtakes(
                threads,
                3_000,
                $slot,
                |slot, cb| lock.acquire_in_observed(slot, cb),
                // SAFETY: each token comes from the acquisition just made.
                |tok| unsafe { lock.release(tok) },
            );
            let bound: u64 = $bound;
            // + 1: the holder at registration time may still count itself.
            assert!(
                worst <= bound + 1,
                "{} overtakes seen, documented bound {} (+1 for the holder)",
                worst,
                bound
            );
            eprintln!(
                "{}: worst overtakes {worst}, bound {bound} + 1",
                stringify!($name)
            );
        }
    };
}

// One thread per slot: the per-slot bound S - 1 (+1 racing fast path)
// becomes per-thread, and with T threads at most T - 1 others can be served
// before the sweep reaches a slot.
bound_test!(
    nxt_ron_distinct_slots,
    NxtRonInline<8>,
    threads = 6,
    slot = |t| t,
    bound = 5 + 1
);
bound_test!(
    nxt_ron_wide,
    NxtRonInline<130>,
    threads = 6,
    slot = |t| t * 25,
    bound = 5 + 1
);
bound_test!(
    ron_plock_distinct_slots,
    RonPlockInline<8>,
    threads = 6,
    slot = |t| t,
    bound = 5 + 1
);
bound_test!(
    ron_alg1_distinct_slots,
    Ron<8>,
    threads = 6,
    slot = |t| t,
    bound = 5 + 1
);
bound_test!(
    ron_ticket_distinct_slots,
    RonTicketInline<8>,
    threads = 6,
    slot = |t| t,
    bound = 5 + 1
);
// RonTicket is FIFO inside a slot: all threads in one slot of 4, q <= T - 1,
// bound q + (q + 1)(S - 1) + 1 with S - 1 = 0 effective other slots in use.
bound_test!(
    ron_ticket_one_slot,
    RonTicketInline<4>,
    threads = 4,
    slot = |_| 1,
    bound = 3 + 1
);
// Two slots, two threads each: q <= 1, the other slot is served at most
// once between two services of ours: q + (q + 1) * 1 + 1.
bound_test!(
    ron_ticket_two_slots,
    RonTicketInline<2>,
    threads = 4,
    slot = |t| t % 2,
    bound = 1 + 2 + 1
);
// The same three with a policy that always queues (`Yield`: its waiters
// never wait unqueued, whatever their CPU looks like), so that every
// acquisition of a loaded run is a queued one: with the default policy a
// waiter whose CPU looked shared first waits unqueued, and the hook then
// marks the moment it queues (or takes the lock unqueued).
bound_test!(
    ron_ticket_distinct_slots_queued,
    RonTicketInline<8, Yield>,
    threads = 6,
    slot = |t| t,
    bound = 5 + 1
);
bound_test!(
    ron_ticket_one_slot_queued,
    RonTicketInline<4, Yield>,
    threads = 4,
    slot = |_| 1,
    bound = 3 + 1
);
bound_test!(
    ron_ticket_two_slots_queued,
    RonTicketInline<2, Yield>,
    threads = 4,
    slot = |t| t % 2,
    bound = 1 + 2 + 1
);
