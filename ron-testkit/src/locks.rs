//! The one list of ron-core locks.
//!
//! [`for_each_lock!`](crate::for_each_lock) calls a callback macro once per
//! lock, in display order (the order of `ron bench --list`). Every suite,
//! the benchmark registry and the examples iterate it, so adding a lock is
//! one line in that macro and no suite can forget it.
//!
//! # The callback
//! Each lock is passed as `callback!(id, Type, { record })`:
//!
//! * `id`: a snake-case identifier (`ron_raw`), for module and test names;
//! * `Type`: the concrete lock type (a `ty` fragment), sized as asked (see
//!   below);
//! * `record`: `{ name: "ron-raw", type_name: "RonRaw", kind: Ron,
//!   generic: RonRaw, fair: true, timed: false, fifo_abort: false,
//!   bound: false, std: false, bytes: 16, about: "..." }`, always with
//!   these keys in this order:
//!   * `name`: the command-line name (`ron bench --locks`);
//!   * `type_name`: the type as `ron bench --list` shows it (full size);
//!   * `kind`: `Ron` or `Baseline`;
//!   * `generic`: the type's name when its first parameter is a slot
//!     count `S` (`Ron` for `Ron<S>`), else `none`;
//!   * `fair`: implements `lock_api::RawMutexFair`;
//!   * `timed`: implements `lock_api::RawMutexTimed`;
//!   * `fifo_abort`: aborts the process when a waiter's relax policy
//!     panics (a FIFO queue or ticket cannot drop a waiter,
//!     `docs/panic-safety.md`);
//!   * `bound`: documents a bound on waiting;
//!   * `std`: exists only with ron-core's `std` feature;
//!   * `bytes`: `size_of` of the full-size type (a type with a slot count
//!     `S` takes 128 bytes more per slot beyond 16);
//!   * `about`: one line for `ron bench --list`.
//!
//! Use [`if_lock!`](crate::if_lock) to act on a property at compile time.
//!
//! # Sizes and relax policies
//! `for_each_lock!(cb)` gives the full-size types the benchmarks run (16
//! slots, 8 cohort groups, ...). `for_each_lock!(cb, small)` gives small
//! ones for model checkers and Miri (4 slots, 2 groups, a CNA that flushes
//! after 2 acquisitions). Either takes `relax = Type` to build every lock
//! that has a relax policy with that one (the default is
//! `ron_core::relax::DefaultRelax`).
//!
//! ```
//! use ron_testkit::for_each_lock;
//! macro_rules! name {
//!     ($id:ident, $ty:ty, { name: $name:literal, $($rest:tt)* }) => {
//!         assert!(!$name.is_empty());
//!         let _lock = <$ty as lock_api::RawMutex>::INIT;
//!     };
//! }
//! for_each_lock!(name);
//! ```

/// Calls `callback!(id, Type, { record })` for every ron-core lock, in
/// display order (see the [module docs](crate::locks)).
///
/// `for_each_lock!(callback)`, `for_each_lock!(callback, small)`,
/// `for_each_lock!(callback, full, relax = R)`,
/// `for_each_lock!(callback, small, relax = R)`, or
/// `for_each_lock!(callback, slots = N, relax = R)` (the full-size types
/// with `N` slots where they take a slot count).
#[macro_export]
macro_rules! for_each_lock {
    ($cb:ident) => {
        $crate::for_each_lock!($cb, full, relax = $crate::__rc::relax::DefaultRelax);
    };
    ($cb:ident, $size:ident) => {
        $crate::for_each_lock!($cb, $size, relax = $crate::__rc::relax::DefaultRelax);
    };
    ($cb:ident, slots = $s:tt, relax = $r:ty) => {
        $crate::__lock_list!(__each_lock! { $cb, full, }, $s, $r);
    };
    ($cb:ident, $size:ident, relax = $r:ty) => {
        $crate::__lock_list!(__each_lock! { $cb, $size, }, 16, $r);
    };
}

/// The list itself: calls `$crate::$m! { $pre (entry) (entry) ... }` with
/// one `(id, [full type] [small type], { record })` per lock, full types
/// with `$s` slots and relax policy `$r`.
#[doc(hidden)]
#[macro_export]
macro_rules! __lock_list {
    ($m:ident! { $($pre:tt)* }, $s:tt, $r:ty) => {
        $crate::$m! { $($pre)*
            (ron_grant, [$crate::__rc::RonGrant] [$crate::__rc::RonGrant], { name: "ron-grant", type_name: "RonGrant", kind: Ron, generic: none, fair: true, timed: true, fifo_abort: false, bound: false, std: false, bytes: 8, about: "RON default: TTAS fast path + nxtRON's grant among spinning waiters, parks on a shared CPU" })
            (ron_raw, [$crate::__rc::RonRaw] [$crate::__rc::RonRaw], { name: "ron-raw", type_name: "RonRaw", kind: Ron, generic: none, fair: true, timed: true, fifo_abort: false, bound: false, std: false, bytes: 8, about: "TTAS fast path + route-ordered handover in the lock word, parks; RonRw's writers' queue" })
            (ron_inline, [$crate::__rc::RonInline<$s>] [$crate::__rc::RonInline<4>], { name: "ron-inline", type_name: "RonInline<16>", kind: Ron, generic: RonInline, fair: true, timed: true, fifo_abort: false, bound: false, std: false, bytes: 2176, about: "RonRaw with its 16 slots inline instead of pooled" })
            (nxt_ron, [$crate::__rc::NxtRon<$r>] [$crate::__rc::NxtRon<$r>], { name: "nxt-ron", type_name: "NxtRon", kind: Ron, generic: none, fair: true, timed: false, fifo_abort: false, bound: true, std: false, bytes: 8, about: "RON-plock + bitmap successor search, pooled slots (one per CPU)" })
            (nxt_ron_inline, [$crate::__rc::NxtRonInline<$s, $r>] [$crate::__rc::NxtRonInline<4, $r>], { name: "nxt-ron-inline", type_name: "NxtRonInline<16>", kind: Ron, generic: NxtRonInline, fair: true, timed: false, fifo_abort: false, bound: true, std: false, bytes: 2176, about: "NxtRon with its 16 slots inline instead of pooled" })
            (ron_plock, [$crate::__rc::RonPlock<$r>] [$crate::__rc::RonPlock<$r>], { name: "ron-plock", type_name: "RonPlock", kind: Ron, generic: none, fair: true, timed: false, fifo_abort: false, bound: true, std: false, bytes: 8, about: "RON Algorithm 3: per-slot count + grant, pooled slots (one per CPU)" })
            (ron_plock_inline, [$crate::__rc::RonPlockInline<$s, $r>] [$crate::__rc::RonPlockInline<4, $r>], { name: "ron-plock-inline", type_name: "RonPlockInline<16>", kind: Ron, generic: RonPlockInline, fair: true, timed: false, fifo_abort: false, bound: true, std: false, bytes: 2176, about: "RonPlock with its 16 slots inline instead of pooled" })
            (ron_ticket, [$crate::__rc::RonTicket<$r>] [$crate::__rc::RonTicket<$r>], { name: "ron-ticket", type_name: "RonTicket", kind: Ron, generic: none, fair: true, timed: false, fifo_abort: true, bound: true, std: false, bytes: 8, about: "RON Algorithm 2: per-slot ticket locks in route order, pooled slots (one per CPU)" })
            (ron_ticket_inline, [$crate::__rc::RonTicketInline<$s, $r>] [$crate::__rc::RonTicketInline<4, $r>], { name: "ron-ticket-inline", type_name: "RonTicketInline<16>", kind: Ron, generic: RonTicketInline, fair: true, timed: false, fifo_abort: true, bound: true, std: false, bytes: 2176, about: "RonTicket with its 16 slots inline instead of pooled" })
            (ron, [$crate::__rc::Ron<$s, $r>] [$crate::__rc::Ron<4, $r>], { name: "ron", type_name: "Ron<16>", kind: Ron, generic: Ron, fair: true, timed: true, fifo_abort: false, bound: true, std: false, bytes: 2176, about: "RON Algorithm 1 with a claim step" })
            (sh_ron, [$crate::__rc::ShRon<$r>] [$crate::__rc::ShRon<$r>], { name: "sh-ron", type_name: "ShRon", kind: Ron, generic: none, fair: true, timed: false, fifo_abort: false, bound: true, std: false, bytes: 8, about: "shRON: RON with a shared slot table for many locks" })
            (ron_park, [$crate::__rc::RonPark<$s>] [$crate::__rc::RonPark<4>], { name: "ron-park", type_name: "RonPark<16>", kind: Ron, generic: RonPark, fair: true, timed: true, fifo_abort: false, bound: false, std: true, bytes: 2304, about: "RON slots whose waiters spin, then sleep on a futex" })
            (mcs, [$crate::__rc::Mcs<$r>] [$crate::__rc::Mcs<$r>], { name: "mcs", type_name: "Mcs", kind: Baseline, generic: none, fair: true, timed: false, fifo_abort: true, bound: true, std: false, bytes: 8, about: "MCS queue lock (FIFO)" })
            (cna, [$crate::__rc::Cna<16, true, $r>] [$crate::__rc::Cna<1, false, $r>], { name: "cna", type_name: "Cna", kind: Baseline, generic: none, fair: true, timed: false, fifo_abort: true, bound: true, std: false, bytes: 8, about: "compact NUMA-aware lock" })
            (cbo_mcs, [$crate::__rc::CBoMcs<8, $r>] [$crate::__rc::CBoMcs<2, $r>], { name: "cbo-mcs", type_name: "CBoMcs<8>", kind: Baseline, generic: none, fair: true, timed: false, fifo_abort: true, bound: false, std: false, bytes: 1152, about: "cohort lock: backoff global + per-node MCS" })
            (fsl, [$crate::__rc::Fsl<4, 16, $r>] [$crate::__rc::Fsl<2, 4, $r>], { name: "fsl", type_name: "Fsl<4>", kind: Baseline, generic: none, fair: true, timed: false, fifo_abort: true, bound: true, std: false, bytes: 2176, about: "FSL: two-level ticket lock, groups of 4 route positions" })
            (ticket, [$crate::__rc::Ticket<$r>] [$crate::__rc::Ticket<$r>], { name: "ticket", type_name: "Ticket", kind: Baseline, generic: none, fair: true, timed: false, fifo_abort: true, bound: true, std: false, bytes: 8, about: "ticket lock (FIFO)" })
            (ttas, [$crate::__rc::Ttas<$r>] [$crate::__rc::Ttas<$r>], { name: "ttas", type_name: "Ttas", kind: Baseline, generic: none, fair: true, timed: true, fifo_abort: false, bound: false, std: false, bytes: 1, about: "test-and-test-and-set" })
            (tas, [$crate::__rc::Tas<$r>] [$crate::__rc::Tas<$r>], { name: "tas", type_name: "Tas", kind: Baseline, generic: none, fair: true, timed: true, fifo_abort: false, bound: false, std: false, bytes: 1, about: "test-and-set" })
        }
    };
}

/// Calls the callback of [`for_each_lock!`](crate::for_each_lock) once per
/// entry of the list.
#[doc(hidden)]
#[macro_export]
macro_rules! __each_lock {
    ($cb:ident, $size:ident, $(($id:ident, [$full:ty] [$small:ty], $rec:tt))*) => {
        $($crate::__lock!($cb, $size, $id, [$full] [$small], $rec);)*
    };
}

/// The command-line names of the list, as an array expression.
#[doc(hidden)]
#[macro_export]
macro_rules! __lock_names {
    ($(($id:ident, [$full:ty] [$small:ty], { name: $name:literal, $($rest:tt)* }))*) => {
        &[$($name),*]
    };
}

/// The command-line names of [`for_each_lock!`](crate::for_each_lock), in
/// display order.
pub const NAMES: &[&str] =
    crate::__lock_list!(__lock_names! {}, 16, crate::__rc::relax::DefaultRelax);

/// Picks the full or small type of one [`for_each_lock!`](crate::for_each_lock)
/// entry and calls the callback.
#[doc(hidden)]
#[macro_export]
macro_rules! __lock {
    ($cb:ident, full, $id:ident, [$full:ty] [$small:ty], $rec:tt) => {
        $cb!($id, $full, $rec);
    };
    ($cb:ident, small, $id:ident, [$full:ty] [$small:ty], $rec:tt) => {
        $cb!($id, $small, $rec);
    };
}

/// Expands `{ then }` when the lock's record (the third argument of a
/// [`for_each_lock!`](crate::for_each_lock) callback) has the property,
/// else `{ otherwise }` if given.
///
/// `if_lock!(timed in $rec => { ... })`,
/// `if_lock!(fifo_abort in $rec => { ... } else { ... })`; the properties
/// are `fair`, `timed`, `fifo_abort`, `bound`, `std` and `generic` (the
/// type takes a slot count).
#[macro_export]
macro_rules! if_lock {
    ($key:ident in $rec:tt => { $($then:tt)* }) => {
        $crate::if_lock!($key in $rec => { $($then)* } else {});
    };
    (fair in { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $g:tt, fair: true, $($rest:tt)* } => { $($then:tt)* } else { $($else:tt)* }) => { $($then)* };
    (timed in { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $g:tt, fair: $f:tt, timed: true, $($rest:tt)* } => { $($then:tt)* } else { $($else:tt)* }) => { $($then)* };
    (fifo_abort in { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $g:tt, fair: $f:tt, timed: $ti:tt, fifo_abort: true, $($rest:tt)* } => { $($then:tt)* } else { $($else:tt)* }) => { $($then)* };
    (bound in { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $g:tt, fair: $f:tt, timed: $ti:tt, fifo_abort: $a:tt, bound: true, $($rest:tt)* } => { $($then:tt)* } else { $($else:tt)* }) => { $($then)* };
    (std in { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $g:tt, fair: $f:tt, timed: $ti:tt, fifo_abort: $a:tt, bound: $b:tt, std: true, $($rest:tt)* } => { $($then:tt)* } else { $($else:tt)* }) => { $($then)* };
    (generic in { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: none, $($rest:tt)* } => { $($then:tt)* } else { $($else:tt)* }) => { $($else)* };
    (generic in { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $g:ident, $($rest:tt)* } => { $($then:tt)* } else { $($else:tt)* }) => { $($then)* };
    ($key:ident in $rec:tt => { $($then:tt)* } else { $($else:tt)* }) => { $($else)* };
}

/// Where a lock comes from (the `kind` of its record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A RON lock.
    Ron,
    /// A baseline lock (TAS, MCS, CNA, ...).
    Baseline,
}

/// One lock of the list as data: its record (see the
/// [module docs](crate::locks)) with the full-size type's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockInfo {
    /// Snake-case identifier (`ron_raw`).
    pub id: &'static str,
    /// Command-line name (`ron-raw`).
    pub name: &'static str,
    /// The type as `ron bench --list` shows it (`RonRaw`).
    pub type_name: &'static str,
    /// RON or baseline.
    pub kind: Kind,
    /// Takes a slot count `S` as its first parameter.
    pub generic: bool,
    /// Implements `RawMutexFair`.
    pub fair: bool,
    /// Implements `RawMutexTimed`.
    pub timed: bool,
    /// Aborts when a waiter's relax policy panics.
    pub fifo_abort: bool,
    /// Documents a bound on waiting.
    pub bound: bool,
    /// Needs ron-core's `std` feature.
    pub std: bool,
    /// `size_of` of the full-size type.
    pub bytes: usize,
    /// One-line description.
    pub about: &'static str,
}

/// Every lock of [`for_each_lock!`](crate::for_each_lock), in display order.
pub fn all() -> Vec<LockInfo> {
    let mut v = Vec::new();
    macro_rules! push {
        ($id:ident, $ty:ty, { name: $name:literal, type_name: $tn:literal, kind: $kind:ident,
          generic: $gen:tt, fair: $fair:literal, timed: $timed:literal,
          fifo_abort: $fa:literal, bound: $bound:literal, std: $std:literal,
          bytes: $bytes:literal, about: $about:literal }) => {
            v.push(LockInfo {
                id: stringify!($id),
                name: $name,
                type_name: $tn,
                kind: Kind::$kind,
                generic: $crate::if_lock!(generic in { name: $name, type_name: $tn, kind: $kind, generic: $gen, } => { true } else { false }),
                fair: $fair,
                timed: $timed,
                fifo_abort: $fa,
                bound: $bound,
                std: $std,
                bytes: $bytes,
                about: $about,
            });
        };
    }
    crate::for_each_lock!(push);
    v
}

/// Panics unless `covered` names exactly the locks of the list (in any
/// order): for suites that instantiate each lock by hand (their parameters
/// differ per lock), so that a lock added to the list and not to them
/// fails a test.
pub fn assert_covers(suite: &str, covered: &[&str]) {
    let names = NAMES;
    let missing: Vec<_> = names.iter().filter(|n| !covered.contains(n)).collect();
    let unknown: Vec<_> = covered.iter().filter(|n| !names.contains(n)).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "{suite}: locks of ron_testkit::for_each_lock! not covered: {missing:?}; \
         names that are not in the list: {unknown:?}"
    );
}
