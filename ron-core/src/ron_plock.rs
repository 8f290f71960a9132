//! [`RonPlock`]: RON Algorithm 3, per-slot waiter count and grant, with a
//! linear successor scan.

crate::plock::plock_type! {
    /// RON-plock: `S` slots, each a waiter count and a grant flag; any waiter
    /// of the granted slot may take the lock. The protocol and its state
    /// table are in [`plock`](crate::plock)'s docs (shared with
    /// [`NxtRon`](crate::NxtRon)).
    ///
    /// * **Guarantees:** mutual exclusion under any schedule and hint;
    ///   progress; bounded waiting *per slot*: once a thread has registered,
    ///   at most `S - 1` grants to other slots plus one racing fast-path
    ///   acquisition happen before its slot is granted. With one thread per
    ///   slot (threads pinned, `S >=` CPUs) that is a per-thread bound of
    ///   `S`; threads sharing a slot race for its grant.
    /// * **Panics:** a waiter whose `Relax` policy panics leaves its slot
    ///   (the last waiter of a granted slot takes the grant and hands the
    ///   lock on), then unwinds; an unlock whose CPU hint panics releases
    ///   the lock (scanning from slot 0) before it unwinds. The lock stays
    ///   usable (`docs/panic-safety.md`).
    /// * **Cost:** `128 * (S + 1)` bytes per lock. Uncontended lock+unlock:
    ///   one CAS, a scan of `S` slot words (O(S) loads, the successor search
    ///   nxtRON removes) and a release store.
    /// * **When not to use:** threads outnumbering CPUs with a relax policy
    ///   that keeps spinning: a grant to a descheduled waiter stalls every
    ///   other thread until that waiter runs (use [`RonRaw`](crate::RonRaw)).
    ///
    /// ```
    /// use ron_core::RonPlock;
    /// static M: lock_api::Mutex<RonPlock<16>, Vec<u32>> = lock_api::Mutex::new(Vec::new());
    /// M.lock().push(7);
    /// assert_eq!(M.lock().len(), 1);
    /// ```
    RonPlock, bitmap = false
}
