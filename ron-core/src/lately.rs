//! Which locks this thread met lately: what [`RonGrant`]'s fast path
//! asks before it CASes (and its unregistered looks, whether they are
//! among the thread's first: [`early_looks`]).
//!
//! A fast path that loads the lock word before its CAS leaves a held
//! lock's line shared with the waiters that poll it, but it pays two
//! requests for a cold line (a shared fetch, then the upgrade for the
//! CAS). A bare CAS pays one, and takes the line from the waiters if the
//! lock is held. So a thread looks first where it may meet waiters, and
//! CASes at once where it has not been lately:
//!
//! | the thread's fast path | looks first? |
//! |---|---|
//! | one of its first `FRESH_LOOKS` (64) | yes: threads that start together often start on one lock |
//! | at the lock it last found contended (a fast path that found it held or lost its CAS, or a release that found waiters) | yes |
//! | at the lock it last took by a bare CAS | yes: a thread that takes one lock again and again may be barging past waiters that look unregistered, which leave no trace in the lock |
//! | anywhere else | no: a bare CAS (a cold lock among many) |
//!
//! A wrong answer costs time only: ownership is the CAS either way.
//! Measured in `docs/design.md` (`RonGrant`'s section, "The fast path
//! CASes at once at a lock the thread has not met lately").
//!
//! [`RonGrant`]: crate::RonGrant

pub(crate) use record::{contended, early_looks, look_first, taken};

/// The record: a thread-local with `std`, outside the models.
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
mod record {
    use core::cell::Cell;

    /// Fast paths of a new thread that look first, wherever they are.
    pub(crate) const FRESH_LOOKS: u8 = 64;

    /// A thread's first waits that look unregistered, for which
    /// [`early_looks`] answers yes.
    pub(crate) const EARLY_WAITS: u8 = 8;

    /// This thread's record.
    #[derive(Clone, Copy)]
    struct Recent {
        /// The address of the lock this thread last found contended (0: none).
        contended: usize,
        /// The address of the lock this thread last took by a bare CAS.
        taken: usize,
        /// Fast paths left of the thread's first `FRESH_LOOKS` (those
        /// at neither lock above).
        fresh: u8,
        /// Waits left of the thread's first `EARLY_WAITS`.
        early: u8,
    }

    crate::sync::thread_local! {
        /// This thread's record.
        static RECENT: Cell<Recent> = const {
            Cell::new(Recent { contended: 0, taken: 0, fresh: FRESH_LOOKS, early: EARLY_WAITS })
        };
    }

    /// Counts one off the countdown `left` picks in `recent`: whether it
    /// had one left.
    #[inline]
    fn count_off(recent: &Cell<Recent>, left: impl FnOnce(&mut Recent) -> &mut u8) -> bool {
        let mut r = recent.get();
        let n = left(&mut r);
        if *n == 0 {
            return false;
        }
        *n -= 1;
        recent.set(r);
        true
    }

    /// Whether this thread's fast path on the lock at `lock` should load
    /// the lock word before its CAS (the module's table).
    #[inline]
    pub(crate) fn look_first(lock: usize) -> bool {
        RECENT.with(|recent| {
            let r = recent.get();
            r.taken == lock || r.contended == lock || count_off(recent, |r| &mut r.fresh)
        })
    }

    /// Whether the wait about to look unregistered is one of this
    /// thread's first `EARLY_WAITS` (counts it).
    #[inline]
    pub(crate) fn early_looks() -> bool {
        RECENT.with(|recent| count_off(recent, |r| &mut r.early))
    }

    /// Records that this thread found the lock at `lock` contended.
    #[inline]
    pub(crate) fn contended(lock: usize) {
        RECENT.with(|r| {
            r.set(Recent {
                contended: lock,
                ..r.get()
            })
        });
    }

    /// Records that this thread took the lock at `lock` by a bare CAS.
    #[inline]
    pub(crate) fn taken(lock: usize) {
        RECENT.with(|r| {
            r.set(Recent {
                taken: lock,
                ..r.get()
            })
        });
    }
}

/// Without `std`, and in the loom and shuttle models (no thread-local
/// state there; the models check the protocol with the look): the fast
/// path always looks first, and nothing is recorded.
#[cfg(not(all(feature = "std", not(any(loom, shuttle)))))]
mod record {
    /// Always: look first.
    #[inline]
    pub(crate) fn look_first(_lock: usize) -> bool {
        true
    }

    /// Never: no thread is told apart.
    #[inline]
    pub(crate) fn early_looks() -> bool {
        false
    }

    /// Nothing to record.
    #[inline]
    pub(crate) fn contended(_lock: usize) {}

    /// Nothing to record.
    #[inline]
    pub(crate) fn taken(_lock: usize) {}
}

#[cfg(all(test, feature = "std", not(any(loom, shuttle, ron_vm))))]
mod tests {
    use super::record::{EARLY_WAITS, FRESH_LOOKS};
    use super::*;

    #[test]
    fn a_thread_looks_first_while_fresh_then_only_at_its_last_contended_or_taken_lock() {
        // A new thread: no lock found contended yet.
        std::thread::spawn(|| {
            let (a, b) = (0x1000, 0x2000);
            for _ in 0..FRESH_LOOKS {
                assert!(look_first(a), "a new thread's first fast paths look");
            }
            assert!(!look_first(a) && !look_first(b), "then a bare CAS");
            contended(a);
            assert!(look_first(a), "the lock last found contended");
            assert!(!look_first(b), "any other lock");
            taken(b);
            assert!(look_first(b) && look_first(a), "and the lock last taken");
            taken(0x3000);
            assert!(!look_first(b) && look_first(a), "only the last taken");
            contended(b);
            assert!(look_first(b) && !look_first(a), "only the last contended");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_threads_first_unregistered_looks_are_early_whatever_its_fast_paths() {
        std::thread::spawn(|| {
            // A thread at one contended lock: its fast paths look first
            // without counting as fresh ones.
            contended(0x1000);
            for _ in 0..2 * FRESH_LOOKS as usize {
                assert!(look_first(0x1000));
            }
            for _ in 0..EARLY_WAITS {
                assert!(early_looks(), "the first unregistered looks are early");
            }
            assert!(!early_looks(), "then no longer");
        })
        .join()
        .unwrap();
    }
}
