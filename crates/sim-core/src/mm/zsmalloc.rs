//! zsmalloc's footprint model (placeholder).
