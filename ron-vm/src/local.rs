//! Per-virtual-thread storage. Virtual threads share one OS thread, so a
//! `thread_local!` would be shared by all of them; a [`FiberLocal`] gives
//! each virtual thread its own value (and the OS thread one more, used
//! outside a VM).

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;

use crate::exec::with_fiber;

thread_local! {
    static OUTSIDE: RefCell<HashMap<usize, Box<dyn Any>>> = RefCell::new(HashMap::new());
}

/// A value per virtual thread, created by `init` on first use. Declare it
/// in a `static`; values live until their virtual thread ends. A value's
/// `Drop` must not use the VM.
///
/// ```
/// use std::cell::Cell;
/// static HITS: ron_vm::FiberLocal<Cell<u32>> = ron_vm::FiberLocal::new(|| Cell::new(0));
/// HITS.with(|h| h.set(h.get() + 1));
/// assert_eq!(HITS.with(|h| h.get()), 1);
/// ```
pub struct FiberLocal<T: 'static> {
    init: fn() -> T,
}

impl<T: 'static> FiberLocal<T> {
    /// A fiber-local whose first value in each virtual thread is `init()`.
    pub const fn new(init: fn() -> T) -> Self {
        FiberLocal { init }
    }

    /// Calls `f` with the calling virtual thread's value.
    pub fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        let key = self as *const Self as usize;
        let get = |map: &mut HashMap<usize, Box<dyn Any>>| -> *const T {
            let b = map.entry(key).or_insert_with(|| Box::new((self.init)()));
            b.downcast_ref::<T>()
                .expect("FiberLocal key holds its own type") as *const T
        };
        let ptr = with_fiber(|s, me| get(&mut s.locals[me]))
            .unwrap_or_else(|| OUTSIDE.with(|m| get(&mut m.borrow_mut())));
        // SAFETY: the value is boxed, so its address is stable while the map
        // grows; it is removed only when its virtual thread has finished
        // (or, outside a VM, when the OS thread exits), and the caller is
        // that thread, inside this call. Only shared references are handed out.
        f(unsafe { &*ptr })
    }
}
