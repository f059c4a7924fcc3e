//! The text trace format (placeholder; the parser is being written).
