//! Integration tests of airlock-harness and the `airlock` binary: one binary, a module
//! per area.

mod adapter_fuzz;
mod adversary;
mod adversary_classes;
mod bounds;
mod certify;
mod certify_semantic;
mod certify_vendor;
mod certify_witness;
mod check;
mod check_exec;
mod check_reports;
mod cli;
mod defects;
mod docs;
mod fixtures;
mod fuzz;
mod init;
mod kinds;
mod lint;
mod lint_vendor;
mod mcp_import;
mod mcp_proxy;
mod mcp_proxy_modes;
mod mcp_proxy_raw;
mod named_files;
mod packaging;
mod report_quotes;
mod snippets;
mod templates;
mod util;
