//! Topology: this machine's sysfs, a fake sysfs tree, and (feature `hwloc`)
//! agreement between sysfs and hwloc.

use std::fs;
use std::path::Path;

use ron_topo::Topology;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

#[test]
fn this_machine_sysfs() {
    let t = match Topology::from_sysfs() {
        Ok(t) => t,
        Err(e) => {
            println!("SKIP: no sysfs topology here: {e}");
            return;
        }
    };
    assert!(!t.is_empty());
    let route = t.route();
    let mut sorted = route.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, t.cpu_ids(), "route is a permutation of the CPUs");
    for c in t.cpus() {
        assert!(c.smt_siblings.contains(&c.cpu));
    }
    assert!(ron_core::route::validate(&route).is_ok());
    println!(
        "this machine: {} CPUs, (packages, nodes, L3, cores) = {:?}, route {route:?}",
        t.len(),
        t.counts()
    );
}

#[test]
fn fake_two_socket_tree() {
    // 2 packages x 2 cores x 2 SMT threads; siblings i and i + 4; one L3 per
    // package; NUMA node per package.
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fake-sysfs-2s");
    let _ = fs::remove_dir_all(&root);
    write(&root, "cpu/online", "0-7\n");
    for cpu in 0..8 {
        let core = cpu % 4;
        let pkg = core / 2;
        let sib = format!("{},{}\n", core, core + 4);
        let l3 = if pkg == 0 { "0-1,4-5\n" } else { "2-3,6-7\n" };
        write(
            &root,
            &format!("cpu/cpu{cpu}/topology/physical_package_id"),
            &format!("{pkg}\n"),
        );
        write(
            &root,
            &format!("cpu/cpu{cpu}/topology/thread_siblings_list"),
            &sib,
        );
        write(&root, &format!("cpu/cpu{cpu}/cache/index3/level"), "3\n");
        write(
            &root,
            &format!("cpu/cpu{cpu}/cache/index3/type"),
            "Unified\n",
        );
        write(
            &root,
            &format!("cpu/cpu{cpu}/cache/index3/shared_cpu_list"),
            l3,
        );
        write(&root, &format!("cpu/cpu{cpu}/cache/index0/level"), "1\n");
    }
    write(&root, "node/node0/cpulist", "0-1,4-5\n");
    write(&root, "node/node1/cpulist", "2-3,6-7\n");
    let t = Topology::from_sysfs_root(&root).unwrap();
    assert_eq!(t.counts(), (2, 2, 2, 4));
    assert_eq!(t.route(), vec![0, 4, 1, 5, 2, 6, 3, 7]);
    assert_eq!(t.numa_groups(), vec![0, 0, 1, 1, 0, 0, 1, 1]);
    assert_eq!(t.cpu(6).unwrap().smt_siblings, vec![2, 6]);
    // Same tree, same hash; a different tree, a different hash.
    assert_eq!(
        t.hash_hex(),
        Topology::from_sysfs_root(&root).unwrap().hash_hex()
    );
    assert_ne!(
        t.hash_hex(),
        Topology::flat(&[0, 1, 2, 3, 4, 5, 6, 7])
            .unwrap()
            .hash_hex()
    );
}

#[test]
fn broken_tree_is_an_error_or_degrades() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fake-sysfs-broken");
    let _ = fs::remove_dir_all(&root);
    assert!(Topology::from_sysfs_root(&root).is_err(), "no cpu/online");
    write(&root, "cpu/online", "garbage");
    assert!(Topology::from_sysfs_root(&root).is_err());
    write(&root, "cpu/online", "");
    assert!(Topology::from_sysfs_root(&root).is_err());
    // Only cpu/online: every CPU degrades to package 0, its own core.
    write(&root, "cpu/online", "0-2");
    let t = Topology::from_sysfs_root(&root).unwrap();
    assert_eq!(t.counts(), (1, 1, 1, 3));
}

#[cfg(feature = "hwloc")]
#[test]
fn sysfs_and_hwloc_agree() {
    let sys = Topology::from_sysfs().expect("sysfs topology");
    let hw = Topology::from_hwloc().expect("hwloc topology");
    assert_eq!(sys, hw, "sysfs and hwloc disagree");
    assert_eq!(sys.hash_hex(), hw.hash_hex());
    println!(
        "sysfs == hwloc: {} CPUs, counts {:?}",
        sys.len(),
        sys.counts()
    );
}
