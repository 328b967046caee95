//! The HARMLESS workloads: flow sets and matching traffic.
