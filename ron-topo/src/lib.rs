//! Topology discovery, core-to-core latency probing, TSP routing and the
//! calibration file of the ron lock family.
