//! `airlock mcp proxy` (being built).
