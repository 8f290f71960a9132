//! [`NxtRon`]: RON-plock with a bitmap of waiting slots (nxtRON).

crate::plock::plock_type! {
    /// nxtRON: RON-plock plus a bitmap of slots that have waiters, so the
    /// unlock finds the next waiting slot along the route by rotate +
    /// `trailing_zeros` per 64-slot word (O(1) for `S <= 64`, O(S/64)
    /// beyond) instead of reading every slot. An unlock with no waiters is
    /// one bitmap load and a store. Protocol and state table:
    /// [`plock`](crate::plock); bitmap invariant: [`slots`](crate::slots).
    ///
    /// * **Guarantees:** as [`RonPlock`](crate::RonPlock): mutual exclusion,
    ///   progress, and per-slot bounded waiting of `S - 1` other grants plus
    ///   one racing fast-path acquisition.
    /// * **Panics:** a waiter whose `Relax` policy panics leaves its slot
    ///   (the last waiter of a granted slot takes the grant and hands the
    ///   lock on), then unwinds; an unlock whose CPU hint panics releases
    ///   the lock (scanning from slot 0) before it unwinds. The lock stays
    ///   usable (`docs/panic-safety.md`).
    /// * **Cost:** `128 * (S + 1)` bytes per lock: the bitmap words live in
    ///   the second cache line of the first `ceil(S/64)` slots and cost
    ///   nothing extra. Uncontended lock+unlock: one CAS, one bitmap load,
    ///   one release store.
    /// * **When not to use:** as `RonPlock`, under oversubscription.
    ///
    /// ```
    /// use ron_core::NxtRon;
    /// let m: lock_api::Mutex<NxtRon<64>, u64> = lock_api::Mutex::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| for _ in 0..1000 { *m.lock() += 1 });
    ///     }
    /// });
    /// assert_eq!(m.into_inner(), 4000);
    /// ```
    NxtRon, bitmap = true
}
