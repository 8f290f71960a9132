//! Loom models of the unwind paths of the slot locks (`Ron`, `RonPlock`,
//! `NxtRon`, `ShRon`): a waiter whose relax
//! policy panics (right after its first failed look, so it is registered or
//! has claimed its slot) races the holder's unlock, which may grant its
//! slot before, during or after the waiter leaves.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p ron-core --release --test loom_unwind`.
//!
//! Each model checks that afterwards the lock is free (a `try_lock`
//! succeeds), that every critical section ran under the lock (a
//! `loom::cell::UnsafeCell` counter), and, over all explored schedules,
//! that both unwind paths were reached: the waiter left without a grant,
//! and the waiter found its slot granted and took and released the lock.
#![cfg(loom)]

use std::panic::{AssertUnwindSafe, catch_unwind};

mod common;

use common::{ModelLock, Shared};
use loom::sync::atomic::AtomicBool;
use loom::thread;
use ron_core::relax::Relax;
use ron_core::{NxtRonInline, PlaceToken, Ron, RonPlockInline, ShRon, coverage};
use std::sync::atomic::Ordering::SeqCst;

loom::lazy_static! {
    /// Set by a waiter's relax policy: it has registered (or claimed) and
    /// looked once (one flag per model execution).
    static ref REGISTERED: AtomicBool = AtomicBool::new(false);
}

/// Says so in `REGISTERED`, then panics, on its first call.
#[derive(Default)]
struct PanicRelax;

impl Relax for PanicRelax {
    fn relax(&mut self) {
        // SeqCst: the holder's load of the flag orders its unlock after our
        // registration.
        REGISTERED.store(true, SeqCst);
        panic!("relax panics (model)");
    }
}

/// The holder (fast path, then unlocking with a token naming
/// `holder_slot`) races a waiter of `waiter_slot` whose relax panics. With
/// `after_registration` the holder unlocks only once the waiter registered
/// and looked (its relax says so, then panics), so the unlock finds it and
/// races its leaving (loom's exploration does not otherwise reach a bitmap
/// unlock that sees the waiter).
fn waiter_unwinds_races_unlock<L: ModelLock<Token = PlaceToken>>(
    holder_slot: usize,
    waiter_slot: usize,
    after_registration: bool,
) {
    loom::model(move || {
        let s = Shared::<L>::new();
        // The fast path: nobody else runs yet.
        let _fast = s.lock.lock_in(holder_slot);
        s.bump();
        let s2 = s.clone();
        let h = thread::spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| s2.lock.lock_in(waiter_slot)));
            match r {
                Ok(t) => {
                    // The waiter got the lock before its relax ran.
                    s2.bump_and_release(t);
                    1
                }
                Err(_) => 0,
            }
        });
        if after_registration {
            while !REGISTERED.load(SeqCst) {
                thread::yield_now();
            }
        }
        // SAFETY: we hold the lock; any token slot is safe.
        unsafe { s.lock.unlock(PlaceToken::at(holder_slot)) };
        let theirs = h.join().unwrap();
        let t2 = s.lock.try_lock().expect("lock left held after the unwind");
        s.bump_and_release(t2);
        assert_eq!(s.total(), 2 + theirs);
    });
}

/// Runs `model` and checks that, over all its schedules, the waiter both
/// left without a grant (`left`) and took a grant while unwinding (`took`).
/// The counters are process-wide: the models run one at a time.
fn reaches_both(left: &str, took: &str, model: impl FnOnce()) {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (l0, t0) = (coverage::count(left), coverage::count(took));
    model();
    assert!(coverage::count(left) > l0, "no schedule reached {left}");
    assert!(coverage::count(took) > t0, "no schedule reached {took}");
}

#[test]
fn ron_one_slot() {
    reaches_both("ron.unwind_left", "ron.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<Ron<1, PanicRelax>>(0, 0, false);
        waiter_unwinds_races_unlock::<Ron<1, PanicRelax>>(0, 0, true);
    });
}

#[test]
fn ron_two_slots() {
    reaches_both("ron.unwind_left", "ron.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<Ron<2, PanicRelax>>(0, 1, false);
        waiter_unwinds_races_unlock::<Ron<2, PanicRelax>>(0, 1, true);
    });
}

#[test]
fn ron_plock_one_slot() {
    reaches_both("plock.unwind_left", "plock.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<RonPlockInline<1, PanicRelax>>(0, 0, false);
        waiter_unwinds_races_unlock::<RonPlockInline<1, PanicRelax>>(0, 0, true);
    });
}

#[test]
fn ron_plock_two_slots() {
    reaches_both("plock.unwind_left", "plock.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<RonPlockInline<2, PanicRelax>>(0, 1, false);
        waiter_unwinds_races_unlock::<RonPlockInline<2, PanicRelax>>(0, 1, true);
    });
}

#[test]
fn nxt_ron_one_slot() {
    reaches_both("plock.unwind_left", "plock.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<NxtRonInline<1, PanicRelax>>(0, 0, false);
        waiter_unwinds_races_unlock::<NxtRonInline<1, PanicRelax>>(0, 0, true);
    });
}

#[test]
fn nxt_ron_two_slots() {
    reaches_both("plock.unwind_left", "plock.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<NxtRonInline<2, PanicRelax>>(0, 1, false);
        waiter_unwinds_races_unlock::<NxtRonInline<2, PanicRelax>>(0, 1, true);
    });
}

#[test]
fn sh_ron_one_row() {
    reaches_both("sh_ron.unwind_left", "sh_ron.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<ShRon<PanicRelax>>(0, 0, false);
        waiter_unwinds_races_unlock::<ShRon<PanicRelax>>(0, 0, true);
    });
}

#[test]
fn sh_ron_two_rows() {
    reaches_both("sh_ron.unwind_left", "sh_ron.unwind_took_grant", || {
        waiter_unwinds_races_unlock::<ShRon<PanicRelax>>(0, 1, false);
        waiter_unwinds_races_unlock::<ShRon<PanicRelax>>(0, 1, true);
    });
    // An unlock that counted the leaving waiter but found its row cleared
    // reads the word again (the count has dropped) and frees the lock.
    assert!(
        coverage::count("sh_ron.scan_found_none") > 0 || !coverage::ENABLED,
        "no schedule reached sh_ron.scan_found_none"
    );
}
