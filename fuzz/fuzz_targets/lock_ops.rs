//! The lock state machine: a byte string drives `lock`, `try_lock`,
//! `unlock`, `unlock_fair`, `bump`, `mem::forget` of a guard, moving and
//! dropping a held lock, garbage CPU hints and route changes, on one lock
//! of each type of `ron_testkit::for_each_lock!` (full size and small) and
//! a few more slot counts, in one thread, checked against a model.
//!
//! The model per lock: free, held (we keep its guard state), or leaked (a
//! guard was forgotten: the lock stays held for good). `lock` is only
//! called on a free lock (a thread relocking its own spinlock deadlocks by
//! design); `try_lock` must succeed iff the model says free; `is_locked`
//! must always match. Each op is two bytes: (op, argument); the lock is
//! picked by the argument.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;
use lock_api::{RawMutex, RawMutexFair};
use ron_core::{NxtRonInline, Ron, RonInline, RonPlockInline, RonTicketInline};
use ron_testkit::{for_each_lock, if_lock};

/// The fair-unlock half of the API, for the types that have it.
struct Fair<R: RawMutex> {
    unlock_fair: unsafe fn(&R, R::Guard),
    bump: unsafe fn(&R, &mut R::Guard),
}

fn fair<R: RawMutexFair>() -> Option<Fair<R>> {
    Some(Fair {
        unlock_fair: R::unlock_fair,
        bump: R::bump,
    })
}

struct Model<R: RawMutex> {
    name: &'static str,
    lock: Box<R>,
    guard: Option<R::Guard>,
    leaked: bool,
    fair: Option<Fair<R>>,
}

trait Entry {
    fn apply(&mut self, op: u8, arg: u8);
    fn finish(&mut self);
}

impl<R: RawMutex> Model<R> {
    fn new(name: &'static str, fair: Option<Fair<R>>) -> Box<dyn Entry>
    where
        R: 'static,
    {
        Box::new(Model {
            name,
            lock: Box::new(R::INIT),
            guard: None,
            leaked: false,
            fair,
        })
    }

    fn held(&self) -> bool {
        self.guard.is_some() || self.leaked
    }

    fn check(&self, after: &str) {
        assert_eq!(
            self.lock.is_locked(),
            self.held(),
            "{}: is_locked disagrees with the model after {after}",
            self.name
        );
    }
}

impl<R: RawMutex> Entry for Model<R> {
    fn apply(&mut self, op: u8, arg: u8) {
        let what = match op % 9 {
            0 => {
                if !self.held() {
                    self.guard = Some(self.lock.lock());
                }
                "lock"
            }
            1 => {
                let g = self.lock.try_lock();
                assert_eq!(
                    g.is_some(),
                    !self.held(),
                    "{}: try_lock vs model",
                    self.name
                );
                if let Some(g) = g {
                    self.guard = Some(g);
                }
                "try_lock"
            }
            2 => {
                if let Some(g) = self.guard.take() {
                    // SAFETY: `g` is the state of the acquisition this
                    // model holds on this very lock.
                    unsafe { self.lock.unlock(g) };
                }
                "unlock"
            }
            3 => {
                if let Some(g) = self.guard.take() {
                    match &self.fair {
                        // SAFETY: `g` is the state of the acquisition this
                        // model holds on this very lock.
                        Some(f) => unsafe { (f.unlock_fair)(&self.lock, g) },
                        // Not a fair lock: plain unlock instead.
                        // SAFETY: as above.
                        None => unsafe { self.lock.unlock(g) },
                    }
                }
                "unlock_fair"
            }
            4 => {
                if let (Some(f), Some(g)) = (&self.fair, self.guard.as_mut()) {
                    // SAFETY: `g` is held on this lock; no other thread
                    // waits, so bump re-acquires at once.
                    unsafe { (f.bump)(&self.lock, g) };
                }
                "bump"
            }
            5 => {
                // is_locked only: checked below. try_lock on a held lock
                // must also leave no trace.
                if self.held() {
                    assert!(
                        self.lock.try_lock().is_none(),
                        "{}: try_lock while held",
                        self.name
                    );
                }
                "is_locked"
            }
            6 => {
                // Forget the guard: the lock stays held, nothing dangles.
                if let Some(g) = self.guard.take() {
                    std::mem::forget(g);
                    self.leaked = true;
                }
                "forget"
            }
            7 => {
                // Move the lock (held or not) to a new address; we own it
                // exclusively, which the RawMutex contract allows.
                let moved: R = *std::mem::replace(&mut self.lock, Box::new(R::INIT));
                drop(std::mem::replace(&mut self.lock, Box::new(moved)));
                "move"
            }
            _ => {
                if arg & 1 == 0 {
                    return;
                }
                // Drop the lock (held, leaked or free) and start afresh. The
                // guard state is forgotten first: guard state may unlock on
                // drop, which must not touch a dropped lock.
                if let Some(g) = self.guard.take() {
                    std::mem::forget(g);
                }
                self.lock = Box::new(R::INIT);
                self.leaked = false;
                "drop"
            }
        };
        self.check(what);
    }

    fn finish(&mut self) {
        if let Some(g) = self.guard.take() {
            // SAFETY: as for unlock.
            unsafe { self.lock.unlock(g) };
        }
        self.check("final unlock");
        if !self.leaked {
            let g = self.lock.try_lock().expect("free lock at the end");
            // SAFETY: just acquired.
            unsafe { self.lock.unlock(g) };
        }
    }
}

/// The garbage hint the locks see when op 9 selects it.
static HINT: AtomicUsize = AtomicUsize::new(0);

fn hint() -> usize {
    // Relaxed: one thread; any value is a valid (garbage) hint.
    HINT.load(Ordering::Relaxed)
}

/// Every lock of the list, full size and small, then a few more slot
/// counts (the list is `ron_testkit::for_each_lock!`: a new lock is added
/// there).
fn locks() -> Vec<Box<dyn Entry>> {
    let mut v: Vec<Box<dyn Entry>> = Vec::new();
    macro_rules! add {
        ($id:ident, $ty:ty, $rec:tt) => {
            if_lock!(fair in $rec => {
                v.push(Model::<$ty>::new(std::any::type_name::<$ty>(), fair()));
            } else {
                v.push(Model::<$ty>::new(std::any::type_name::<$ty>(), None));
            });
        };
    }
    for_each_lock!(add);
    for_each_lock!(add, small);
    v.push(Model::<RonInline<1>>::new("RonInline<1>", fair()));
    v.push(Model::<NxtRonInline<130>>::new("NxtRonInline<130>", fair()));
    v.push(Model::<RonPlockInline<3>>::new("RonPlockInline<3>", fair()));
    v.push(Model::<RonTicketInline<2>>::new("RonTicketInline<2>", fair()));
    v.push(Model::<Ron<2>>::new("Ron<2>", fair()));
    v
}

fuzz_target!(|data: &[u8]| {
    ron_core::hint::set_provider(hint);
    let mut locks = locks();
    for pair in data.chunks_exact(2) {
        let (op, arg) = (pair[0], pair[1]);
        match op % 12 {
            9 => {
                // A new CPU hint: small ids, ids above any route, huge ids.
                let v = match arg % 3 {
                    0 => usize::from(arg),
                    1 => usize::from(arg) * 4099,
                    _ => usize::MAX - usize::from(arg),
                };
                HINT.store(v, Ordering::Relaxed); // see hint()
            }
            10 => {
                // Change the route while locks are held: a rotation of
                // 1..=16 CPUs, or none.
                if arg < 16 {
                    ron_core::route::clear();
                } else {
                    let n = 1 + usize::from(arg) % 16;
                    let route: Vec<usize> = (0..n).map(|i| (i + usize::from(arg)) % n).collect();
                    ron_core::route::install(&route).expect("a rotation is a valid route");
                }
            }
            11 => {
                // Both must be clean (errors, not panics).
                let _ = ron_core::route::install(&[usize::from(arg), usize::from(arg)]);
            }
            _ => {
                let n = locks.len();
                locks[usize::from(arg) % n].apply(op, arg / 16);
            }
        }
    }
    for l in &mut locks {
        l.finish();
    }
});
