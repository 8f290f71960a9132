//! What makes a run independent of the process it runs in and of the
//! address-space layout: each run in a process of its own, forked from
//! the caller ([`isolated`]), so that it starts from the same process-wide
//! state whatever ran before; its lock and data lines at one fixed virtual
//! address ([`RunMemory`]); fiber stacks at fixed addresses (`ron-vm`'s
//! `Vm::fixed_stacks`).
//!
//! Why: ron-core keeps process-wide state between runs (the slot blocks
//! of the pooled locks, which a claim cleans with a priced store per slot
//! an earlier lock left dirty; `ShRon`'s wait table, whose pages are
//! allocated and published, a priced CAS, on first use; the slots a block
//! uses, which only grow with the largest route installed), and it derives
//! things from addresses (the block a pooled lock claims first is a hash
//! of the lock's address, `Cna` seeds its draw from its queue node's stack
//! address), while heap addresses depend on everything the process
//! allocated and freed before (and on hash-map iteration orders that
//! differ from process to process). Without this, a run's rows depended
//! on the runs before it in the process, and on ASLR.

use std::cell::Cell;
use std::sync::Once;

use crate::run_stats::RunStats;

/// Where every run's lock and data lines live: far from where Linux places
/// the heap, libraries and ordinary mappings on 64-bit targets.
#[cfg(target_pointer_width = "64")]
const BASE: usize = 0x3d00_0000_0000;

const PAGE: usize = 4096;

/// A value on its own 128-byte block (two 64-byte lines), so that no two
/// workload objects share a line whatever `Costs::line_bytes` is.
#[repr(align(128))]
pub(crate) struct Block<T>(pub(crate) T);

/// One run's lock and data lines, at [`BASE`] (the lock) and the next page
/// boundary after it (the lines), the same addresses in every run; where
/// that address is taken, on an ordinary page-aligned allocation (and the
/// run may then depend on what ran before; said once on stderr). Runs take
/// turns (`workload::one_run_at_a_time`), so one `RunMemory` exists at a time.
pub(crate) struct RunMemory<R> {
    base: *mut u8,
    len: usize,
    mapped: bool,
    lock: *mut Block<R>,
    lines: *mut Block<Cell<u64>>,
    k: usize,
}

impl<R> RunMemory<R> {
    /// Places `lock` and `k` zeroed data lines.
    pub(crate) fn new(lock: R, k: usize) -> Self {
        let lock_bytes = size_of::<Block<R>>().next_multiple_of(PAGE);
        let lines_bytes = (k * size_of::<Block<Cell<u64>>>()).next_multiple_of(PAGE);
        let len = lock_bytes + lines_bytes.max(PAGE);
        let (base, mapped) = map(len);
        let lock_at = base.cast::<Block<R>>();
        // SAFETY: `base` is `len` writable bytes, page-aligned (so aligned
        // for a `Block`), and the lock's bytes and the lines' lie inside.
        let lines = unsafe {
            lock_at.write(Block(lock));
            let lines = base.add(lock_bytes).cast::<Block<Cell<u64>>>();
            for i in 0..k {
                lines.add(i).write(Block(Cell::new(0)));
            }
            lines
        };
        RunMemory {
            base,
            len,
            mapped,
            lock: lock_at,
            lines,
            k,
        }
    }

    /// The lock, for the run's fibers.
    ///
    /// # Safety
    /// The reference must not be used after `self` is dropped: only by
    /// fibers of a VM run that ends (returns or unwinds) before that.
    pub(crate) unsafe fn lock(&self) -> &'static Block<R> {
        // SAFETY: initialised in `new`, dropped only by `drop`; the caller
        // promises not to use it longer.
        unsafe { &*self.lock }
    }

    /// The data lines, for the run's fibers (as [`lock`](Self::lock)).
    ///
    /// # Safety
    /// As for [`lock`](Self::lock).
    pub(crate) unsafe fn lines(&self) -> &'static [Block<Cell<u64>>] {
        // SAFETY: `k` lines initialised in `new`; see `lock`.
        unsafe { core::slice::from_raw_parts(self.lines, self.k) }
    }
}

impl<R> Drop for RunMemory<R> {
    fn drop(&mut self) {
        // SAFETY: the lock was written in `new` and is dropped once, here;
        // the lines are `Cell<u64>`s (no drop). Then the memory goes back
        // the way it came.
        unsafe {
            core::ptr::drop_in_place(self.lock);
            unmap(self.base, self.len, self.mapped);
        }
    }
}

/// `len` zeroed bytes at [`BASE`] (`true`), else page-aligned anywhere.
fn map(len: usize) -> (*mut u8, bool) {
    #[cfg(all(unix, target_pointer_width = "64"))]
    {
        // A hint, not MAP_FIXED: the kernel uses the address only if it is
        // free, and never replaces a mapping.
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                BASE as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p as usize == BASE {
            return (p.cast(), true);
        }
        if p != libc::MAP_FAILED {
            // SAFETY: the mapping just made, unused.
            unsafe { libc::munmap(p, len) };
        }
    }
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        eprintln!(
            "ron-vm-bench: the fixed run address is unavailable; rows may depend on the runs before"
        )
    });
    let layout = std::alloc::Layout::from_size_align(len, PAGE).expect("a small layout");
    // SAFETY: `layout` has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    (p, false)
}

/// Gives back what [`map`] returned.
///
/// # Safety
/// `base`, `len` and `mapped` are one of `map`'s results, not yet given back.
unsafe fn unmap(base: *mut u8, len: usize, mapped: bool) {
    if mapped {
        #[cfg(all(unix, target_pointer_width = "64"))]
        // SAFETY: the caller's promise: our mapping of `len` bytes.
        unsafe {
            libc::munmap(base.cast(), len)
        };
    } else {
        let layout = std::alloc::Layout::from_size_align(len, PAGE).expect("a small layout");
        // SAFETY: the caller's promise: allocated by `map` with this layout.
        unsafe { std::alloc::dealloc(base, layout) };
    }
}

/// Runs `f` (one VM run) in a child process forked from this one and
/// returns what it returned: every run starts from this process's state,
/// never from what an earlier run left behind (the caller runs no VM of
/// its own). A panic in the child panics here with its message. Where
/// there is no `fork` (or with `--cfg ron_coverage`, whose counters must
/// count in this process) it runs `f` here.
pub(crate) fn isolated<T: Wire>(f: impl FnOnce() -> T) -> T {
    #[cfg(all(unix, not(ron_coverage)))]
    {
        let mut fds = [0; 2];
        // SAFETY: `fds` is a writable array of two descriptors.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return f();
        }
        let (rd, wr) = (fds[0], fds[1]);
        // SAFETY: the child only runs `f` on this thread (the only one it
        // has), writes the outcome to the pipe and leaves with `_exit`
        // (no destructors, no atexit handlers of the parent's state).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let bytes = match out {
                Ok(s) => encode(&s),
                Err(e) => {
                    let msg = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a run panicked".into());
                    let mut b = vec![1u8];
                    b.extend_from_slice(msg.as_bytes());
                    b
                }
            };
            let mut at = 0;
            while at < bytes.len() {
                // SAFETY: writes from a live buffer to our end of the pipe.
                let n = unsafe { libc::write(wr, bytes[at..].as_ptr().cast(), bytes.len() - at) };
                if n <= 0 {
                    break;
                }
                at += n as usize;
            }
            // SAFETY: ends the child at once, as above.
            unsafe { libc::_exit(0) };
        }
        // SAFETY: our copy of the write end; the child has its own.
        unsafe { libc::close(wr) };
        if pid < 0 {
            // SAFETY: the read end, unused.
            unsafe { libc::close(rd) };
            return f();
        }
        let mut bytes = Vec::new();
        let mut buf = [0u8; 1 << 16];
        loop {
            // SAFETY: reads into a live buffer from our end of the pipe.
            let n = unsafe { libc::read(rd, buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                bytes.extend_from_slice(&buf[..n as usize]);
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
        }
        // SAFETY: the read end, done; then reap the child.
        unsafe {
            libc::close(rd);
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
        }
        match bytes.split_first() {
            Some((0, rest)) => decode::<T>(rest).expect("a run's stats from its process"),
            Some((_, msg)) => panic!("{}", String::from_utf8_lossy(msg)),
            None => panic!("a run's process died without a result"),
        }
    }
    #[cfg(not(all(unix, not(ron_coverage))))]
    f()
}

/// What a run returns across the process boundary of [`isolated`]: its
/// fields as 64-bit words, and back.
// Used only where runs cross a process boundary (`isolated`'s `fork`).
#[cfg_attr(not(all(unix, not(ron_coverage))), allow(dead_code))]
pub(crate) trait Wire: Sized {
    /// The fields, in order.
    fn to_words(&self) -> Vec<u64>;
    /// The inverse of [`to_words`](Self::to_words); `None` if the words run out.
    fn from_words(next: &mut dyn FnMut() -> Option<u64>) -> Option<Self>;
}

/// `s` as bytes: 0, then its words little-endian.
#[cfg(all(unix, not(ron_coverage)))]
fn encode<T: Wire>(s: &T) -> Vec<u8> {
    let mut b = vec![0u8];
    for x in s.to_words() {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
}

/// The inverse of [`encode`] (without its leading 0).
#[cfg(all(unix, not(ron_coverage)))]
fn decode<T: Wire>(b: &[u8]) -> Option<T> {
    let mut words = b
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
    T::from_words(&mut || words.next())
}

impl Wire for RunStats {
    fn to_words(&self) -> Vec<u64> {
        let s = self;
        let mut w: Vec<u64> = vec![
            s.total,
            s.window_acquisitions,
            s.window_ns.to_bits(),
            s.mlocks_per_s.to_bits(),
            s.handover_ns.to_bits(),
            s.handover_p50_ns.to_bits(),
            s.handovers,
            s.latency_ns[0].to_bits(),
            s.latency_ns[1].to_bits(),
            s.latency_ns[2].to_bits(),
            s.exclusion_ok as u64,
            s.wall_s.to_bits(),
            s.cpu_s.to_bits(),
            s.switches,
            s.memory.loads,
            s.memory.stores,
            s.memory.rmws,
            s.memory.transfers,
            s.window_transfers,
            s.per_thread.len() as u64,
        ];
        w.extend_from_slice(&s.per_thread);
        w.push(s.cs_samples.len() as u64);
        for &(n, t) in &s.cs_samples {
            w.push(n as u64);
            w.push(t.to_bits());
        }
        w.push(s.lines.len() as u64);
        for l in &s.lines {
            w.extend([l.kind.code(), l.addr, l.transfers, l.wait_ps]);
        }
        for &(t, p) in &s.kind_totals {
            w.extend([t, p]);
        }
        w
    }

    fn from_words(next: &mut dyn FnMut() -> Option<u64>) -> Option<Self> {
        let f = |x: u64| f64::from_bits(x);
        let total = next()?;
        let window_acquisitions = next()?;
        let window_ns = f(next()?);
        let mlocks_per_s = f(next()?);
        let handover_ns = f(next()?);
        let handover_p50_ns = f(next()?);
        let handovers = next()?;
        let latency_ns = [f(next()?), f(next()?), f(next()?)];
        let exclusion_ok = next()? != 0;
        let wall_s = f(next()?);
        let cpu_s = f(next()?);
        let switches = next()?;
        let memory = ron_vm::CostStats {
            loads: next()?,
            stores: next()?,
            rmws: next()?,
            transfers: next()?,
        };
        let window_transfers = next()?;
        let n = next()? as usize;
        let per_thread = (0..n).map(|_| next()).collect::<Option<Vec<u64>>>()?;
        let m = next()? as usize;
        let cs_samples = (0..m)
            .map(|_| Some((next()? as u32, f(next()?))))
            .collect::<Option<Vec<_>>>()?;
        let n = next()? as usize;
        let lines = (0..n)
            .map(|_| {
                Some(crate::run_stats::LineShare {
                    kind: crate::run_stats::LineKind::from_code(next()?)?,
                    addr: next()?,
                    transfers: next()?,
                    wait_ps: next()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let mut kind_totals = [(0, 0); 3];
        for k in &mut kind_totals {
            *k = (next()?, next()?);
        }
        Some(RunStats {
            total,
            window_acquisitions,
            window_ns,
            mlocks_per_s,
            handover_ns,
            handover_p50_ns,
            handovers,
            latency_ns,
            per_thread,
            exclusion_ok,
            wall_s,
            cpu_s,
            switches,
            memory,
            window_transfers,
            cs_samples,
            lines,
            kind_totals,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> RunStats {
        RunStats {
            total: 7,
            window_acquisitions: 5,
            window_ns: 1234.5,
            mlocks_per_s: 4.05,
            handover_ns: 81.25,
            handover_p50_ns: 80.0,
            handovers: 4,
            latency_ns: [1.5, 2.5, 3.5],
            per_thread: vec![3, 0, 2],
            exclusion_ok: true,
            wall_s: 0.25,
            cpu_s: 0.125,
            switches: 99,
            memory: ron_vm::CostStats {
                loads: 10,
                stores: 11,
                rmws: 12,
                transfers: 13,
            },
            window_transfers: 6,
            cs_samples: vec![(2, 40.5), (0, 41.0)],
            lines: vec![crate::run_stats::LineShare {
                kind: crate::run_stats::LineKind::Other,
                addr: 0x3d00_0000_0080,
                transfers: 3,
                wait_ps: 123_456,
            }],
            kind_totals: [(1, 2), (3, 4), (5, 6)],
        }
    }

    #[test]
    fn a_run_comes_back_from_its_process_whole() {
        assert_eq!(isolated(stats), stats());
    }

    #[test]
    #[should_panic(expected = "lost wake-up in the child")]
    fn a_panic_in_the_run_panics_here() {
        isolated::<RunStats>(|| panic!("lost wake-up in the child"));
    }
}
