//! The CNA paper's key-value map: an AVL tree of at most [`KEYS`] keys in
//! virtual-machine memory, one node per cache line, every node visit a
//! priced load and every node change a priced store. Lookups, inserts and
//! removes of uniformly drawn keys; the tree starts with about half of the
//! keys.

use ron_stats::SplitMix64;

/// The key range (keys are `0..KEYS`).
pub const KEYS: u32 = 1024;
const NIL: u32 = u32::MAX;

/// One node on its own line.
#[repr(align(64))]
#[derive(Clone, Copy)]
struct Node {
    key: u32,
    left: u32,
    right: u32,
    height: i32,
}

/// The root pointer on its own line.
#[repr(align(64))]
struct Root(u32);

/// An AVL tree whose nodes live in one fixed arena (their addresses never
/// change, so each node is one line of the VM).
pub struct Tree {
    nodes: Box<[Node]>,
    free: Vec<u32>,
    root: Box<Root>,
    len: usize,
}

impl Tree {
    /// A tree holding `KEYS / 2` distinct keys drawn with `seed`.
    pub fn half_full(seed: u64) -> Self {
        let mut t = Tree {
            nodes: vec![
                Node {
                    key: 0,
                    left: NIL,
                    right: NIL,
                    height: 0,
                };
                KEYS as usize
            ]
            .into_boxed_slice(),
            free: (0..KEYS).rev().collect(),
            root: Box::new(Root(NIL)),
            len: 0,
        };
        let mut rng = SplitMix64::new(seed ^ 0x6b76);
        while t.len < KEYS as usize / 2 {
            t.insert(rng.below(KEYS as usize) as u32);
        }
        t
    }

    /// Keys in the tree.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn ld(&self, i: u32) {
        ron_vm::on_load(&self.nodes[i as usize] as *const Node as usize);
    }
    fn st(&self, i: u32) {
        ron_vm::on_store(&self.nodes[i as usize] as *const Node as usize);
    }
    fn n(&mut self, i: u32) -> &mut Node {
        &mut self.nodes[i as usize]
    }
    fn h(&self, i: u32) -> i32 {
        if i == NIL {
            0
        } else {
            self.ld(i);
            self.nodes[i as usize].height
        }
    }
    fn root(&self) -> u32 {
        ron_vm::on_load(&*self.root as *const Root as usize);
        self.root.0
    }
    fn set_root(&mut self, r: u32) {
        if r != self.root.0 {
            ron_vm::on_store(&*self.root as *const Root as usize);
            self.root.0 = r;
        }
    }

    /// Whether `key` is in the tree.
    pub fn contains(&self, key: u32) -> bool {
        let mut i = self.root();
        while i != NIL {
            self.ld(i);
            let n = self.nodes[i as usize];
            if key == n.key {
                return true;
            }
            i = if key < n.key { n.left } else { n.right };
        }
        false
    }

    /// Inserts `key`; false if it was there.
    pub fn insert(&mut self, key: u32) -> bool {
        let r = self.root();
        let (r, done) = self.ins(r, key);
        self.set_root(r);
        self.len += usize::from(done);
        done
    }

    /// Removes `key`; false if it was not there.
    pub fn remove(&mut self, key: u32) -> bool {
        let r = self.root();
        let (r, done) = self.rem(r, key);
        self.set_root(r);
        self.len -= usize::from(done);
        done
    }

    /// One operation of the mix: a lookup with probability `lookup`, else
    /// an insert or a remove (even odds), of a uniform key.
    pub fn op(&mut self, rng: &mut SplitMix64, lookup: f64) {
        let key = rng.below(KEYS as usize) as u32;
        if rng.next_f64() < lookup {
            self.contains(key);
        } else if rng.next_f64() < 0.5 {
            self.insert(key);
        } else {
            self.remove(key);
        }
    }

    /// Whether the tree is a valid AVL tree of `len` keys in order.
    pub fn valid(&self) -> bool {
        fn walk(t: &Tree, i: u32, lo: i64, hi: i64, count: &mut usize) -> Option<i32> {
            if i == NIL {
                return Some(0);
            }
            let n = t.nodes[i as usize];
            let k = n.key as i64;
            if k <= lo || k >= hi {
                return None;
            }
            *count += 1;
            let l = walk(t, n.left, lo, k, count)?;
            let r = walk(t, n.right, k, hi, count)?;
            ((l - r).abs() <= 1 && n.height == 1 + l.max(r)).then_some(1 + l.max(r))
        }
        let mut count = 0;
        walk(self, self.root.0, -1, KEYS as i64, &mut count).is_some() && count == self.len
    }

    fn set_left(&mut self, i: u32, c: u32) {
        if self.nodes[i as usize].left != c {
            self.n(i).left = c;
            self.st(i);
        }
    }
    fn set_right(&mut self, i: u32, c: u32) {
        if self.nodes[i as usize].right != c {
            self.n(i).right = c;
            self.st(i);
        }
    }
    fn fix(&mut self, i: u32) {
        let (l, r) = (self.nodes[i as usize].left, self.nodes[i as usize].right);
        let h = 1 + self.h(l).max(self.h(r));
        if self.nodes[i as usize].height != h {
            self.n(i).height = h;
            self.st(i);
        }
    }
    fn rot_right(&mut self, i: u32) -> u32 {
        let l = self.nodes[i as usize].left;
        self.ld(l);
        let lr = self.nodes[l as usize].right;
        self.set_left(i, lr);
        self.set_right(l, i);
        self.fix(i);
        self.fix(l);
        l
    }
    fn rot_left(&mut self, i: u32) -> u32 {
        let r = self.nodes[i as usize].right;
        self.ld(r);
        let rl = self.nodes[r as usize].left;
        self.set_right(i, rl);
        self.set_left(r, i);
        self.fix(i);
        self.fix(r);
        r
    }
    fn balance(&mut self, i: u32) -> u32 {
        self.fix(i);
        let (l, r) = (self.nodes[i as usize].left, self.nodes[i as usize].right);
        let b = self.h(l) - self.h(r);
        if b > 1 {
            let (ll, lr) = (self.nodes[l as usize].left, self.nodes[l as usize].right);
            if self.h(ll) < self.h(lr) {
                let nl = self.rot_left(l);
                self.set_left(i, nl);
            }
            return self.rot_right(i);
        }
        if b < -1 {
            let (rl, rr) = (self.nodes[r as usize].left, self.nodes[r as usize].right);
            if self.h(rr) < self.h(rl) {
                let nr = self.rot_right(r);
                self.set_right(i, nr);
            }
            return self.rot_left(i);
        }
        i
    }
    fn ins(&mut self, i: u32, key: u32) -> (u32, bool) {
        if i == NIL {
            let Some(j) = self.free.pop() else {
                return (NIL, false);
            };
            *self.n(j) = Node {
                key,
                left: NIL,
                right: NIL,
                height: 1,
            };
            self.st(j);
            return (j, true);
        }
        self.ld(i);
        let n = self.nodes[i as usize];
        if key == n.key {
            return (i, false);
        }
        let (c, done) = if key < n.key {
            let (c, d) = self.ins(n.left, key);
            self.set_left(i, c);
            (c, d)
        } else {
            let (c, d) = self.ins(n.right, key);
            self.set_right(i, c);
            (c, d)
        };
        let _ = c;
        if done {
            (self.balance(i), true)
        } else {
            (i, false)
        }
    }
    fn rem(&mut self, i: u32, key: u32) -> (u32, bool) {
        if i == NIL {
            return (NIL, false);
        }
        self.ld(i);
        let n = self.nodes[i as usize];
        let done = if key < n.key {
            let (c, d) = self.rem(n.left, key);
            self.set_left(i, c);
            d
        } else if key > n.key {
            let (c, d) = self.rem(n.right, key);
            self.set_right(i, c);
            d
        } else {
            self.free.push(i);
            if n.left == NIL {
                return (n.right, true);
            }
            if n.right == NIL {
                return (n.left, true);
            }
            let (r, m) = self.rem_min(n.right);
            self.n(m).left = n.left;
            self.n(m).right = r;
            self.st(m);
            return (self.balance(m), true);
        };
        if done {
            (self.balance(i), true)
        } else {
            (i, false)
        }
    }
    fn rem_min(&mut self, i: u32) -> (u32, u32) {
        self.ld(i);
        let n = self.nodes[i as usize];
        if n.left == NIL {
            return (n.right, i);
        }
        let (l, m) = self.rem_min(n.left);
        self.set_left(i, l);
        (self.balance(i), m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ops_keep_a_valid_avl_tree() {
        let mut t = Tree::half_full(3);
        assert_eq!(t.len(), KEYS as usize / 2);
        assert!(t.valid());
        let mut set = std::collections::BTreeSet::new();
        for k in 0..KEYS {
            if t.contains(k) {
                set.insert(k);
            }
        }
        let mut rng = SplitMix64::new(9);
        for _ in 0..20_000 {
            let k = rng.below(KEYS as usize) as u32;
            match rng.below(3) {
                0 => assert_eq!(t.contains(k), set.contains(&k)),
                1 => assert_eq!(t.insert(k), set.insert(k)),
                _ => assert_eq!(t.remove(k), set.remove(&k)),
            }
        }
        assert!(t.valid());
        assert_eq!(t.len(), set.len());
    }
}
