//! `RonRw`'s state machine: a byte string drives reads (in chosen reader
//! groups), writes, `try_*`, timed attempts with an expired deadline,
//! upgradable reads that upgrade or downgrade, write downgrades, forgotten
//! guards and biasing, on a few locks in one thread, checked against a
//! model: free, `n` readers (we keep their guard states), a writer, an
//! upgradable reader, leaked (forgotten) readers or writer.
//!
//! Blocking calls are made only where the model says they cannot block;
//! every `try_*` must succeed exactly when the model says it can, and
//! `is_locked` / `is_locked_exclusive` must always match. Two bytes per op:
//! (op, argument); the lock is picked by the argument.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use lock_api::{RawRwLock, RawRwLockDowngrade, RawRwLockTimed, RawRwLockUpgrade};
use ron_core::RonRw;
use ron_core::ron_rw::ReadToken;
use ron_core::token::PlaceToken;

#[derive(Default)]
struct Model {
    lock: Box<RonRw>,
    readers: Vec<ReadToken>,
    writer: bool,
    upgradable: Option<PlaceToken>,
    leaked_readers: usize,
    leaked_writer: bool,
}

impl Model {
    fn others_read(&self) -> bool {
        !self.readers.is_empty() || self.leaked_readers > 0
    }
    fn any_read(&self) -> bool {
        self.others_read() || self.upgradable.is_some()
    }
    fn write_held(&self) -> bool {
        self.writer || self.leaked_writer
    }
    fn free(&self) -> bool {
        !self.any_read() && !self.write_held()
    }

    fn check(&self) {
        let l = &*self.lock;
        assert_eq!(RawRwLock::is_locked(l), !self.free(), "is_locked");
        assert_eq!(RawRwLock::is_locked_exclusive(l), self.write_held(), "is_locked_exclusive");
    }

    fn apply(&mut self, op: u8, arg: u8) {
        let l = &*self.lock;
        match op % 16 {
            0 if !self.write_held() => self.readers.push(l.read_in(arg as usize)),
            1 => {
                let r = RawRwLock::try_lock_shared(l);
                assert_eq!(r.is_some(), !self.write_held(), "try_lock_shared");
                self.readers.extend(r);
            }
            2 if self.free() => {
                RawRwLock::lock_exclusive(l);
                self.writer = true;
            }
            3 => {
                let ok = RawRwLock::try_lock_exclusive(l).is_some();
                assert_eq!(ok, self.free(), "try_lock_exclusive");
                self.writer |= ok;
            }
            4 if !self.readers.is_empty() => {
                let t = self.readers.swap_remove(arg as usize % self.readers.len());
                // SAFETY: `t` is a shared acquisition we hold.
                unsafe { RawRwLock::unlock_shared(l, t) };
            }
            5 if self.writer => {
                // SAFETY: we hold exclusive access.
                unsafe { RawRwLock::unlock_exclusive(l, ()) };
                self.writer = false;
            }
            6 if self.writer => {
                // SAFETY: as above.
                self.readers.push(unsafe { RawRwLockDowngrade::downgrade(l, ()) });
                self.writer = false;
            }
            7 if self.upgradable.is_none() && !self.write_held() => {
                self.upgradable = Some(RawRwLockUpgrade::lock_upgradable(l));
            }
            8 => {
                let r = RawRwLockUpgrade::try_lock_upgradable(l);
                assert_eq!(
                    r.is_some(),
                    self.upgradable.is_none() && !self.write_held(),
                    "try_lock_upgradable"
                );
                if r.is_some() {
                    self.upgradable = r;
                }
            }
            9 if self.upgradable.is_some() && !self.others_read() => {
                let u = self.upgradable.take().unwrap();
                // SAFETY: `u` is our upgradable acquisition.
                unsafe { RawRwLockUpgrade::upgrade(l, u) };
                self.writer = true;
            }
            10 if self.upgradable.is_some() => {
                let u = self.upgradable.take().unwrap();
                // SAFETY: as above.
                match unsafe { RawRwLockUpgrade::try_upgrade(l, u) } {
                    Ok(()) => {
                        assert!(!self.others_read(), "try_upgrade past a reader");
                        self.writer = true;
                    }
                    Err(u) => {
                        assert!(self.others_read(), "try_upgrade failed alone");
                        self.upgradable = Some(u);
                    }
                }
            }
            11 if self.upgradable.is_some() => {
                let u = self.upgradable.take().unwrap();
                // SAFETY: as above.
                unsafe { RawRwLockUpgrade::unlock_upgradable(l, u) };
            }
            12 => {
                if arg % 2 == 0 {
                    let r = RawRwLockTimed::try_lock_shared_for(l, Duration::ZERO);
                    assert_eq!(r.is_some(), !self.write_held(), "try_lock_shared_for(0)");
                    self.readers.extend(r);
                } else {
                    let ok = RawRwLockTimed::try_lock_exclusive_for(l, Duration::ZERO).is_some();
                    assert_eq!(ok, self.free(), "try_lock_exclusive_for(0)");
                    self.writer |= ok;
                }
            }
            13 => {
                if arg % 2 == 0 {
                    if self.readers.pop().is_some() {
                        self.leaked_readers += 1; // forgotten guard
                    }
                } else if self.writer {
                    self.writer = false;
                    self.leaked_writer = true;
                }
            }
            14 => {
                let _ = l.bias_now();
            }
            _ => {}
        }
        self.check();
    }
}

fuzz_target!(|data: &[u8]| {
    let mut locks: Vec<Model> = (0..3).map(|_| Model::default()).collect();
    for op in data.chunks_exact(2) {
        let m = &mut locks[op[1] as usize % 3];
        m.apply(op[0], op[1] / 3);
    }
    // Release what is held (leaked ones stay held, and are dropped held).
    for m in &mut locks {
        let l = &*m.lock;
        for t in m.readers.drain(..) {
            // SAFETY: held.
            unsafe { RawRwLock::unlock_shared(l, t) };
        }
        if let Some(u) = m.upgradable.take() {
            // SAFETY: held.
            unsafe { RawRwLockUpgrade::unlock_upgradable(l, u) };
        }
        if m.writer {
            // SAFETY: held.
            unsafe { RawRwLock::unlock_exclusive(l, ()) };
            m.writer = false;
        }
        m.check();
    }
});
