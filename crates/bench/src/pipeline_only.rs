//! Pipeline-only mode: packets from memory through the pipeline, no I/O.
