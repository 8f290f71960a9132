//! Topology-routed spinlocks.
//!
//! Placeholder root; filled in below.
#![cfg_attr(not(feature = "std"), no_std)]

pub mod groups;
pub mod hint;
pub mod relax;
pub mod route;
mod sync;
