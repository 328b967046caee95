//! Experiments (one module each) and their registry.
