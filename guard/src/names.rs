//! The name rule: a tool name is 1 to 128 of `A-Z a-z 0-9 _ . -` (the MCP tool-name
//! alphabet), never `.` or `..`. The files a contract folder may name follow the same rule,
//! so only such names are ever joined onto a folder.

/// Whether `name` is a tool name: 1 to 128 of `A-Z a-z 0-9 _ . -` (the MCP tool-name
/// rule), and not `.` or `..`. Such a name is never a path: it can be joined onto a folder
/// as one file-name component and stays inside it.
///
/// ```
/// use airlock_guard::is_tool_name;
///
/// assert!(is_tool_name("job_run_status"));
/// assert!(is_tool_name("a.b-c_9"));
/// for bad in ["", ".", "..", "a/b", "a b", "é", &"x".repeat(129)] {
///     assert!(!is_tool_name(bad), "{bad:?}");
/// }
/// ```
pub fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Whether `name` is a plain file name of a contract folder: the tool-name rule, one
/// definition for both.
pub(crate) fn is_plain_name(name: &str) -> bool {
    is_tool_name(name)
}
