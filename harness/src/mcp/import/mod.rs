//! `airlock mcp import` (being built).
