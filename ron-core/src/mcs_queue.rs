//! The waiters-only MCS queue (the qspinlock shape, docs/design.md)
//! shared by [`Mcs`](crate::Mcs), [`Cna`](crate::Cna) and the local locks of
//! [`CBoMcs`](crate::CBoMcs).
//!
//! The lock is one word, `tail | LOCKED`; its states are the table in
//! [`Mcs`](crate::mcs)'s module docs. Nodes live on their waiter's stack,
//! 128-byte aligned.
//!
//! * lock: fast path CAS `0 -> LOCKED`. Slow path: swap our node in as the
//!   tail (keeping `LOCKED`; if the word is 0, CAS it to `LOCKED` instead);
//!   link it behind the old tail (`prev.next = me`) and wait for `prev` to
//!   make us head. As head, wait for `LOCKED == 0`, then take the lock: if we
//!   are still the tail, CAS `me -> LOCKED` (leaving the queue empty), else
//!   `fetch_or(LOCKED)`, wait for our successor to link itself, and make it
//!   head (Release store of its `head` flag).
//! * unlock: `fetch_and(!LOCKED)` (Release). The holder never touches a node.
//!
//! ## Why no node outlives its `acquire` call
//! A node is reachable from the lock word (as tail), from its predecessor's
//! `next`, and (CNA) from the head's secondary queue. Its owner returns from
//! `acquire` only as head, after: (1) it was made head, which was its
//! predecessor's last access to it; (2) it is no longer the tail (the CAS
//! `me -> LOCKED` removed it, or a successor replaced it), and if a successor
//! replaced it, that successor's `next` store (its last access to our node)
//! was seen before we hand the head role on; (3) it is on no secondary queue
//! (only the head owns that queue, and a node is taken off it when it is
//! made head). So no thread holds the address once `acquire` returns: the
//! guard is a zero-size token, `mem::forget` of it just leaves the lock held,
//! and a thread can hold any number of these locks at once.
//!
//! ## Panics
//! A panicking relax policy aborts the process: see `acquire_slow`.
//!
//! ## CNA (enabled by the `cna` argument)
//! The head, while it waits for `LOCKED == 0`, looks at its successors: if
//! the first is of another group and some later *linked* node (one whose
//! `next` is set, so not the tail an enqueuer may be linking to) is of the
//! head's group, it moves the run of other-group nodes before it to the
//! secondary queue. The secondary queue (head, tail, and a count of local
//! handovers) travels with the head role in the nodes. When the head hands
//! on, the secondary queue is spliced in front of the main queue if the
//! successor is of another group or the count reached the threshold; when
//! the main queue is empty, the secondary queue becomes the main queue (one
//! CAS on the tail). With shuffle reduction an empty secondary queue starts
//! a reordering only with probability 1/128 per head (xorshift32 state
//! passed along with the head role), so light contention keeps FIFO order.

use core::ptr;

use crate::relax::Relax;
use crate::sync::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use crate::unwind::AbortOnUnwind;

/// Bit 0 of the lock word: held.
pub(crate) const LOCKED: usize = 1;

/// Settings of the CNA reordering.
#[derive(Clone, Copy)]
pub(crate) struct CnaCfg {
    /// The waiter's group (from the topology hint; any value is safe).
    pub(crate) group: usize,
    /// Local handovers (with a non-empty secondary queue) before a flush.
    pub(crate) threshold: u32,
    /// Start reordering from an empty secondary queue with probability 1/128 only.
    pub(crate) shuffle_reduction: bool,
}

/// A waiter's queue node (on its stack).
#[repr(C, align(128))]
struct Node {
    next: AtomicUsize,
    head: AtomicBool,
    group: usize,
    sec_head: AtomicUsize,
    sec_tail: AtomicUsize,
    local: AtomicU32,
    rng: AtomicU32,
}

impl Node {
    fn new(group: usize) -> Self {
        Node {
            next: AtomicUsize::new(0),
            head: AtomicBool::new(false),
            group,
            sec_head: AtomicUsize::new(0),
            sec_tail: AtomicUsize::new(0),
            local: AtomicU32::new(0),
            rng: AtomicU32::new(0),
        }
    }
}

/// A node address back to a reference.
///
/// # Safety
/// `addr` is the address of a node whose owner has not returned from
/// `acquire_slow` (see "Why no node outlives its `acquire` call").
#[inline]
unsafe fn node<'a>(addr: usize) -> &'a Node {
    // SAFETY: forwarded contract; the provenance was exposed when the
    // owner published the address.
    unsafe { &*ptr::with_exposed_provenance::<Node>(addr) }
}

/// The head's secondary queue (CNA): first and last node, 0 when empty.
#[derive(Clone, Copy)]
struct Secondary {
    head: usize,
    tail: usize,
    local: u32,
    rng: u32,
}

/// The queue lock word.
pub(crate) struct McsQueue {
    state: AtomicUsize,
}

impl McsQueue {
    crate::sync::const_fn_unless_loom! {
        pub(crate) fn new() -> Self {
            McsQueue { state: AtomicUsize::new(0) }
        }
    }

    #[inline]
    pub(crate) fn try_fast(&self) -> bool {
        // Acquire: pairs with the Release `fetch_and` in `release`.
        self.state
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub(crate) unsafe fn release(&self) {
        // Release: publishes the critical section to the next owner (an RMW,
        // since enqueuers change the tail bits concurrently).
        self.state.fetch_and(!LOCKED, Ordering::Release);
    }

    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOCKED != 0 // a snapshot by contract
    }

    /// Whether waiters are queued. Called by the holder: a queued waiter
    /// cannot leave before the holder releases, so `true` stays true.
    #[inline]
    pub(crate) fn has_waiters(&self) -> bool {
        // Relaxed: the holder's own acquiring RMW precedes this load in the
        // word's modification order, and the tail only goes back to 0 by
        // taking the lock, which nobody can do while we hold it.
        self.state.load(Ordering::Relaxed) & !LOCKED != 0
    }

    /// The slow path: queue, become head, take the lock, hand the head role
    /// on. Returns with the lock held and the caller's node dead. `lock`
    /// names the lock type in the abort message (see below).
    ///
    /// User code (the relax policy) runs while our node is queued. A queued
    /// node cannot be unlinked without waiting for our turn (our successor
    /// learns the head role only from us), and its stack frame must not die
    /// while it is reachable; so a panic in `relax` aborts the process
    /// (`AbortOnUnwind`). The policies are built before the node is
    /// published, so a panicking `R::default()` unwinds cleanly.
    #[cold]
    pub(crate) fn acquire_slow<R: Relax>(&self, cna: Option<CnaCfg>, lock: &'static str) {
        let relax = R::default();
        let head_relax = R::default();
        let link_relax = R::default();
        let me_node = Node::new(cna.map_or(0, |c| c.group));
        let me = ptr::from_ref(&me_node).expose_provenance();
        let Some(prev) = self.enqueue(me) else {
            return; // took the free lock without queueing
        };
        // Our node is reachable from now on: no unwinding until we return.
        let queued = AbortOnUnwind::new(lock);
        let sec = wait_until_head(&me_node, me, prev, relax);
        if let Some(sec) = self.take_as_head(&me_node, me, sec, cna, head_relax) {
            hand_head_on(&me_node, sec, cna, link_relax);
        }
        queued.disarm();
    }

    /// Swaps our node `me` in as the tail (keeping `LOCKED`) and returns
    /// the previous tail (0: none, we are head at once); `None` when the
    /// word was 0 and we took the lock instead.
    #[inline]
    fn enqueue(&self, me: usize) -> Option<usize> {
        let mut cur = self.state.load(Ordering::Relaxed); // a guess for the CAS
        loop {
            if cur == 0 {
                // Acquire: pairs with the Release in `release`.
                match self
                    .state
                    .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                {
                    Ok(_) => return None,
                    Err(now) => cur = now,
                }
                continue;
            }
            // AcqRel: Release publishes our node's initialization to whoever
            // finds it as the tail; Acquire makes the old tail's
            // initialization visible before we write its `next`.
            match self.state.compare_exchange(
                cur,
                me | (cur & LOCKED),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(cur & !LOCKED),
                Err(now) => cur = now,
            }
        }
    }

    /// As head: waits for `LOCKED` to clear (reordering the queue behind
    /// us for CNA meanwhile) and takes the lock. Returns the secondary
    /// queue when a successor must be made head ([`hand_head_on`]); `None`
    /// when the queue is left to nobody or the secondary queue took it over.
    #[inline]
    fn take_as_head<R: Relax>(
        &self,
        me_node: &Node,
        me: usize,
        mut sec: Secondary,
        cna: Option<CnaCfg>,
        mut relax: R,
    ) -> Option<Secondary> {
        let mut shuffle = false;
        if let Some(c) = cna {
            sec.rng ^= sec.rng << 13;
            sec.rng ^= sec.rng >> 17;
            sec.rng ^= sec.rng << 5;
            shuffle = sec.head != 0 || !c.shuffle_reduction || sec.rng & 127 == 0;
        }
        loop {
            let cur = self.state.load(Ordering::Relaxed); // a guess, checked by RMWs
            if cur & LOCKED == 0 {
                if cur == me {
                    if sec.head == 0 {
                        // Acquire: takes the lock (pairs with `release`).
                        if self
                            .state
                            .compare_exchange(me, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                            .is_ok()
                        {
                            return None;
                        }
                    } else {
                        // The main queue is empty: the secondary queue becomes
                        // it. AcqRel: Acquire takes the lock; Release publishes
                        // the secondary tail's null `next` to new enqueuers.
                        if self
                            .state
                            .compare_exchange(
                                me,
                                sec.tail | LOCKED,
                                Ordering::AcqRel, // mutants: kept, CNA secondary queue (docs/mutants.md)
                                Ordering::Relaxed,
                            )
                            .is_ok()
                        {
                            let succ = sec.head;
                            sec.head = 0;
                            sec.tail = 0;
                            sec.local = 0;
                            // SAFETY: `succ` is queued (secondary queue), so alive.
                            unsafe { pass_head(succ, sec) };
                            return None;
                        }
                    }
                    continue; // a waiter enqueued behind us: retry
                }
                // Waiters behind us and LOCKED clear: only the head sets it.
                // Acquire: takes the lock (pairs with `release`).
                let old = self.state.fetch_or(LOCKED, Ordering::Acquire);
                debug_assert_eq!(
                    old & LOCKED,
                    0,
                    "only the head sets LOCKED on a queued word"
                );
                return Some(sec);
            }
            if shuffle && let Some(c) = cna {
                reorder(me_node, &mut sec, c.group);
            }
            relax.relax();
        }
    }
}

/// Links our node `me` behind `prev` (0: none) and waits until its owner
/// makes us head; returns the secondary queue that came with the role.
#[inline]
fn wait_until_head<R: Relax>(me_node: &Node, me: usize, prev: usize, mut relax: R) -> Secondary {
    if prev == 0 {
        // An empty main queue implies an empty secondary queue: a head
        // only leaves the tail empty when its secondary queue is.
        return Secondary {
            head: 0,
            tail: 0,
            local: 0,
            rng: (me >> 7) as u32 | 1,
        };
    }
    // SAFETY: `prev` was the tail; its owner cannot return before we link
    // (it would need to CAS itself out of the tail, which we replaced, or
    // to see our `next` store).
    let p = unsafe { node(prev) };
    // Release: publishes our node to `prev`'s owner (Acquire load).
    p.next.store(me, Ordering::Release);
    // Acquire: pairs with the predecessor's `head` Release. mutants: kept, CNA
    while !me_node.head.load(Ordering::Acquire) {
        relax.relax();
        #[cfg(all(ron_vm, not(loom), not(shuttle)))]
        crate::relax::vm_idle(&mut relax, crate::sync::vm_addr(&me_node.head));
    }
    // Relaxed: written before the `head` Release store we acquired.
    Secondary {
        head: me_node.sec_head.load(Ordering::Relaxed),
        tail: me_node.sec_tail.load(Ordering::Relaxed),
        local: me_node.local.load(Ordering::Relaxed),
        rng: me_node.rng.load(Ordering::Relaxed),
    }
}

/// We own the lock and a successor has replaced us as tail: waits for it
/// to link itself, then hands the head role to it, or, for CNA, to the
/// secondary queue flushed in front of it.
#[inline]
fn hand_head_on<R: Relax>(me_node: &Node, mut sec: Secondary, cna: Option<CnaCfg>, mut relax: R) {
    let next = loop {
        // Acquire: pairs with the successor's Release store of our `next`.
        let n = me_node.next.load(Ordering::Acquire);
        if n != 0 {
            break n;
        }
        relax.relax();
        #[cfg(all(ron_vm, not(loom), not(shuttle)))]
        crate::relax::vm_idle(&mut relax, crate::sync::vm_addr(&me_node.next));
    };
    let succ = match cna {
        Some(c) if sec.head != 0 => {
            // SAFETY: `next` is queued behind us, so alive.
            let other_group = unsafe { node(next) }.group != c.group;
            if other_group || sec.local >= c.threshold {
                // Flush: the secondary queue goes in front of the main one.
                // SAFETY: `sec.tail` is on our secondary queue, so alive.
                // Release: the node's owner reads it after becoming head.
                unsafe { node(sec.tail) }
                    .next
                    .store(next, Ordering::Release); // mutants: kept, CNA secondary queue (docs/mutants.md)
                let s = sec.head;
                sec.head = 0;
                sec.tail = 0;
                sec.local = 0;
                s
            } else {
                sec.local += 1;
                next
            }
        }
        _ => next,
    };
    // SAFETY: `succ` is queued (main or secondary queue), so alive.
    unsafe { pass_head(succ, sec) };
}

/// Makes `succ` the queue head, handing it the secondary queue.
///
/// # Safety
/// `succ` is a queued node (its owner waits for `head`).
#[inline]
unsafe fn pass_head(succ: usize, sec: Secondary) {
    // SAFETY: forwarded contract.
    let s = unsafe { node(succ) };
    // Relaxed: published by the Release store of `head` below.
    s.sec_head.store(sec.head, Ordering::Relaxed);
    s.sec_tail.store(sec.tail, Ordering::Relaxed);
    s.local.store(sec.local, Ordering::Relaxed);
    s.rng.store(sec.rng, Ordering::Relaxed);
    // Release: publishes the fields above and everything this thread saw of
    // the queue; after this store we never touch `succ` again.
    s.head.store(true, Ordering::Release); // mutants: kept, CNA secondary queue (docs/mutants.md)
}

/// CNA reordering by the waiting head: moves the run of other-group nodes
/// in front of the first linked node of `group` to the secondary queue.
fn reorder(me: &Node, sec: &mut Secondary, group: usize) {
    // Acquire: pairs with the Release store that linked the node.
    let first = me.next.load(Ordering::Acquire);
    if first == 0 {
        return;
    }
    // SAFETY: nodes behind the head are queued, so alive (module docs).
    if unsafe { node(first) }.group == group {
        return;
    }
    let mut last = first;
    let local = loop {
        // SAFETY: as above; `last` is linked (its `next` was non-zero).
        let n = unsafe { node(last) }.next.load(Ordering::Acquire); // as above
        if n == 0 {
            return; // reached a possible tail without finding our group
        }
        // SAFETY: as above.
        if unsafe { node(n) }.group == group {
            break n;
        }
        last = n;
    };
    // Only linked (non-tail) nodes move, so no enqueuer writes their `next`.
    // Relaxed: these links are read by the owners after the head role
    // reaches them through Release/Acquire `head` handoffs, or by us.
    // SAFETY: `last` is queued.
    unsafe { node(last) }.next.store(0, Ordering::Relaxed);
    if sec.head == 0 {
        sec.head = first;
    } else {
        // SAFETY: `sec.tail` is on our secondary queue.
        unsafe { node(sec.tail) }
            .next
            .store(first, Ordering::Relaxed); // as above
    }
    sec.tail = last;
    me.next.store(local, Ordering::Relaxed); // as above
}
