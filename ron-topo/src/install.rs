//! Installing the route (and NUMA groups) into ron-core.
//!
//! [`install`] looks for a calibration file:
//!
//! 1. the path in the environment variable [`ENV_CALIBRATION`]
//!    (`RON_CALIBRATION`; an empty value counts as unset). A missing file,
//!    a directory, an empty file, an invalid file or one from another
//!    machine is reported in [`InstallReport::fallback_reason`] and the
//!    topology route is used instead;
//! 2. otherwise [`default_calibration_path`]:
//!    `<user cache dir>/ron/calibration.json` (e.g.
//!    `~/.cache/ron/calibration.json`); a missing file there is the normal
//!    uncalibrated case.
//!
//! Without a usable calibration it installs the topology route
//! ([`crate::Topology::route`]); if even the topology cannot be read,
//! nothing is installed and ron-core keeps its identity order. NUMA nodes
//! are installed into `ron_core::groups` whenever the topology is known.
//! It never panics: every failure ends up in the returned report.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::calibration::{Calibration, Fingerprint};
use crate::topology::Topology;

/// Environment variable naming the calibration file.
pub const ENV_CALIBRATION: &str = "RON_CALIBRATION";

/// Where the installed route came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteSource {
    /// A calibration file.
    Calibration(PathBuf),
    /// The topology order.
    Topology,
    /// Nothing was installed (ron-core's identity order applies).
    None,
}

impl fmt::Display for RouteSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteSource::Calibration(p) => write!(f, "calibration file {}", p.display()),
            RouteSource::Topology => write!(f, "topology order"),
            RouteSource::None => write!(f, "none (identity order)"),
        }
    }
}

/// What [`install`] did.
#[derive(Debug, Clone)]
pub struct InstallReport {
    /// Where the route came from.
    pub source: RouteSource,
    /// The installed route (CPU ids), empty if none.
    pub route: Vec<usize>,
    /// The calibration file looked at, if any.
    pub calibration_path: Option<PathBuf>,
    /// Why the calibration was not used (absent when it was, or when no
    /// file exists at the default path).
    pub fallback_reason: Option<String>,
    /// Whether NUMA groups were installed into `ron_core::groups`.
    pub groups_installed: bool,
    /// Other errors (topology, ron-core refusals).
    pub errors: Vec<String>,
}

/// `<user cache dir>/ron/calibration.json`, if the platform has a cache dir.
pub fn default_calibration_path() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("ron").join("calibration.json"))
}

/// The calibration path [`install`] uses: `RON_CALIBRATION` if set and
/// non-empty, else [`default_calibration_path`]. The flag says whether it
/// came from the environment.
pub fn calibration_path() -> Option<(PathBuf, bool)> {
    match std::env::var_os(ENV_CALIBRATION) {
        Some(v) if !v.is_empty() => Some((PathBuf::from(v), true)),
        _ => default_calibration_path().map(|p| (p, false)),
    }
}

/// Finds the calibration, falls back to the topology route, installs the
/// route and NUMA groups into ron-core (see the module docs).
///
/// ```
/// let report = ron_topo::install();
/// println!("route from {}", report.source);
/// ```
#[must_use = "the report says where the route came from and why a calibration was not used"]
pub fn install() -> InstallReport {
    let topo = Topology::detect();
    let path = calibration_path();
    install_with(
        path.as_ref().map(|(p, explicit)| (p.as_path(), *explicit)),
        topo,
    )
}

/// [`install`] with the calibration path (and whether it was asked for
/// explicitly) and the topology given.
#[must_use = "the report says where the route came from and why a calibration was not used"]
pub fn install_with(
    path: Option<(&Path, bool)>,
    topo: Result<Topology, crate::topology::TopologyError>,
) -> InstallReport {
    let mut report = InstallReport {
        source: RouteSource::None,
        route: Vec::new(),
        calibration_path: path.map(|(p, _)| p.to_path_buf()),
        fallback_reason: None,
        groups_installed: false,
        errors: Vec::new(),
    };
    let topo = match topo {
        Ok(t) => Some(t),
        Err(e) => {
            report.errors.push(format!("topology: {e}"));
            None
        }
    };
    if let Some(t) = &topo {
        match ron_core::groups::install(&t.numa_groups()) {
            Ok(()) => report.groups_installed = true,
            Err(e) => report.errors.push(format!("NUMA groups: {e}")),
        }
    }
    // 1. Calibration file.
    if let Some((p, explicit)) = path {
        if !explicit && !p.exists() {
            // The normal uncalibrated case: nothing to report.
        } else {
            match &topo {
                None => {
                    report.fallback_reason = Some(
                        "cannot check the calibration's fingerprint without a topology".into(),
                    );
                }
                Some(t) => match Calibration::load(p, &Fingerprint::of(t)) {
                    Ok(cal) => match ron_core::route::install(&cal.route) {
                        Ok(()) => {
                            report.source = RouteSource::Calibration(p.to_path_buf());
                            report.route = cal.route;
                            return report;
                        }
                        Err(e) => {
                            report.fallback_reason =
                                Some(format!("ron-core refused the calibrated route: {e}"))
                        }
                    },
                    Err(e) => report.fallback_reason = Some(e.to_string()),
                },
            }
        }
    }
    // 2. Topology route.
    if let Some(t) = &topo {
        let route = t.route();
        match ron_core::route::install(&route) {
            Ok(()) => {
                report.source = RouteSource::Topology;
                report.route = route;
            }
            Err(e) => report
                .errors
                .push(format!("ron-core refused the topology route: {e}")),
        }
    }
    report
}
