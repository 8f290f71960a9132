//! Fiber stacks at fixed virtual addresses ([`Vm::fixed_stacks`]): fiber
//! `i` of every such run gets the same stack addresses, whatever ran
//! before in the process and wherever the OS places mappings (ASLR), so
//! code that derives anything from a stack address (a queue node's
//! address as a seed, which nodes share a line) runs the same every time.
//!
//! [`Vm::fixed_stacks`]: crate::Vm::fixed_stacks

use corosensei::stack::{DefaultStack, Stack, StackPointer};

/// Where the fixed stacks start: far from where Linux places the heap,
/// libraries and ordinary mappings on 64-bit targets.
#[cfg(all(unix, target_pointer_width = "64"))]
const BASE: usize = 0x3e00_0000_0000;

/// One run's fixed stacks: one mapping of every fiber's guard page and
/// stack, at [`BASE`]; only one run at a time holds them.
pub(crate) struct FixedStacks {
    #[cfg(all(unix, target_pointer_width = "64"))]
    map: usize,
    #[cfg(all(unix, target_pointer_width = "64"))]
    len: usize,
    /// Bytes of one fiber's stack, its guard page included.
    each: usize,
    page: usize,
    /// Held for the whole run: the addresses are the process's one set.
    _turn: std::sync::MutexGuard<'static, ()>,
}

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl FixedStacks {
    /// Maps `n` stacks of `bytes` (and a guard page each) at the fixed
    /// address; `None` where that address is taken or the platform has no
    /// fixed addresses (the caller then uses ordinary stacks).
    pub(crate) fn map(n: usize, bytes: usize) -> Option<FixedStacks> {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        Self::map_at(n, bytes, turn)
    }

    #[cfg(all(unix, target_pointer_width = "64"))]
    fn map_at(
        n: usize,
        bytes: usize,
        turn: std::sync::MutexGuard<'static, ()>,
    ) -> Option<FixedStacks> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let size = bytes
            .max(corosensei::stack::MIN_STACK_SIZE)
            .next_multiple_of(page);
        let each = size + page;
        let len = each.checked_mul(n.max(1))?;
        // A hint, not MAP_FIXED: the kernel uses the address only if it is
        // free, and never replaces a mapping.
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let map = unsafe {
            libc::mmap(
                BASE as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return None;
        }
        let stacks = FixedStacks {
            map: map as usize,
            len,
            each,
            page,
            _turn: turn,
        };
        if map as usize != BASE {
            return None; // dropping `stacks` unmaps it
        }
        for i in 0..n {
            // SAFETY: the guard page lies inside the mapping made above.
            let rc = unsafe {
                libc::mprotect(
                    (BASE + i * each) as *mut libc::c_void,
                    page,
                    libc::PROT_NONE,
                )
            };
            if rc != 0 {
                return None;
            }
        }
        Some(stacks)
    }

    #[cfg(not(all(unix, target_pointer_width = "64")))]
    fn map_at(
        _n: usize,
        _bytes: usize,
        _turn: std::sync::MutexGuard<'static, ()>,
    ) -> Option<FixedStacks> {
        None
    }

    /// Fiber `i`'s stack.
    #[cfg(all(unix, target_pointer_width = "64"))]
    pub(crate) fn stack(&self, i: usize) -> FiberStack {
        let limit = self.map + i * self.each;
        debug_assert!(limit + self.each <= self.map + self.len && self.page > 0);
        FiberStack::Fixed {
            limit: StackPointer::new(limit).expect("a mapped address"),
            base: StackPointer::new(limit + self.each).expect("a mapped address"),
        }
    }

    #[cfg(not(all(unix, target_pointer_width = "64")))]
    pub(crate) fn stack(&self, _i: usize) -> FiberStack {
        let _ = (self.each, self.page);
        unreachable!("no fixed stacks on this platform")
    }
}

#[cfg(all(unix, target_pointer_width = "64"))]
impl Drop for FixedStacks {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map_at`; every fiber using it is
        // gone (the executor drops its fibers first).
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.len) };
    }
}

/// A fiber's stack: an ordinary one, or one of a run's [`FixedStacks`].
pub(crate) enum FiberStack {
    /// Mapped wherever the OS chose.
    Default(DefaultStack),
    /// Inside a [`FixedStacks`] mapping, which outlives the fiber.
    #[cfg_attr(not(all(unix, target_pointer_width = "64")), allow(dead_code))]
    Fixed {
        /// The highest address.
        base: StackPointer,
        /// The lowest address, its guard page's.
        limit: StackPointer,
    },
}

// SAFETY: a `Default` stack is corosensei's own; a `Fixed` one has a guard
// page at `limit` (made `PROT_NONE` in `map_at`) and at least
// `MIN_STACK_SIZE` usable bytes above it, page-aligned at both ends, and
// stays mapped until every fiber is dropped.
unsafe impl Stack for FiberStack {
    #[inline]
    fn base(&self) -> StackPointer {
        match self {
            FiberStack::Default(s) => s.base(),
            FiberStack::Fixed { base, .. } => *base,
        }
    }

    #[inline]
    fn limit(&self) -> StackPointer {
        match self {
            FiberStack::Default(s) => s.limit(),
            FiberStack::Fixed { limit, .. } => *limit,
        }
    }

    #[cfg(windows)]
    fn teb_fields(&self) -> corosensei::stack::StackTebFields {
        match self {
            FiberStack::Default(s) => s.teb_fields(),
            FiberStack::Fixed { .. } => unreachable!("no fixed stacks on Windows"),
        }
    }

    #[cfg(windows)]
    fn update_teb_fields(&mut self, stack_limit: usize, guaranteed_stack_bytes: usize) {
        if let FiberStack::Default(s) = self {
            s.update_teb_fields(stack_limit, guaranteed_stack_bytes)
        }
    }
}
