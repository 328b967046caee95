//! Table features (spec §7.3.5.5). STUB: owned by the multipart helper.
