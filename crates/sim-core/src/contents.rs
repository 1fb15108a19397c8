//! Page contents and how each compressor shrinks them (placeholder: filled in by the
//! contents work; see the module doc there).
