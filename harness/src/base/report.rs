//! Report primitives every capability's renderings share: terminal and Markdown
//! escaping, the SARIF envelope, paths and lines as a report shows them, and locations
//! that do not move with the seed.

use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

/// A SARIF 2.1.0 log of one run of the tool `name` (`airlock`, `airlock lint`, …): its
/// rules and results, pretty-printed.
pub(crate) fn sarif_log(name: &str, rules: Vec<Value>, results: Vec<Value>) -> String {
    let sarif = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": name,
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&sarif).unwrap_or_default()
}

/// `text` safe to print on a terminal: control characters (C0, DEL, C1: escape
/// sequences, bells, carriage returns), bidirectional overrides and other invisible
/// format characters are written as `\u{…}` escapes; a backslash is doubled so an
/// escape cannot be forged.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    // One list of invisible characters: the one the guard refuses in command output.
    let unsafe_char = |c: char| c.is_control() || c == '\\' || airlock_guard::invisible(c);
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` as literal Markdown in a table cell: [`printable`], then every character that
/// Markdown or HTML would interpret (links, images, emphasis, code, tags, entities, the
/// cell separator) escaped.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in printable(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '|' | '#' | '!' | '~' | '{' | '}'
            | '+' | '-' | '.' | ':' | '"' | '\'' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The line of `file` where the finding at instance `location` is best shown: 1 for a
/// fixture (the whole response), the line of the member's schema in a schema file.
pub(crate) fn line_of(file: &Path, location: &str) -> Option<usize> {
    let name = file.file_name()?.to_str()?;
    if !name.ends_with(".schema.json") {
        return Some(1);
    }
    let source = std::fs::read(file).ok()?;
    let positions = super::pointer::positions(&source);
    let member = location.rsplit('/').next().filter(|m| !m.is_empty())?;
    // The first `…/properties/<member>` in the schema text.
    positions
        .iter()
        .filter(|(pointer, _)| pointer.ends_with(&format!("/properties/{member}")))
        .map(|(_, (line, _))| *line)
        .min()
}

/// A path relative to the working directory when it is inside it.
pub(crate) fn relative(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    cwd.and_then(|cwd| canonical.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or(canonical)
        .to_string_lossy()
        .replace('\\', "/")
}

/// `location` with every canary (a member name the adversary made from its seed, `zq`
/// and 14 lower-case letters and digits) written `<canary>`, and a byte offset
/// (`byte:N`, which random cases place by the seed) written `byte:*`: the same variant
/// has the same location whatever the seed.
pub fn stable_location(location: &str) -> String {
    if location
        .strip_prefix("byte:")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return "byte:*".to_owned();
    }
    let canary = |segment: &str| {
        segment.len() == 16
            && segment.starts_with("zq")
            && segment[2..]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    location
        .split('/')
        .map(|segment| if canary(segment) { "<canary>" } else { segment })
        .collect::<Vec<_>>()
        .join("/")
}

/// `text` as a Markdown code span for a table cell: [`printable`], the cell separator
/// escaped, and fenced by more backticks than any run inside it, so nothing in it can
/// end the span, the cell or the row. A plain name comes out as `` `name` ``.
pub fn code_span(text: &str) -> String {
    let text = printable(text).replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    if longest == 0 {
        return format!("`{text}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}

/// Prose in a Markdown table cell: [`printable`], with the cell separator and HTML's
/// `<`, `>` and `&` escaped (no tag, entity or extra column). Plain prose is unchanged;
/// [`markdown_text`] is for text that must render literally.
pub fn cell_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in printable(text).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_cannot_be_ended_by_what_it_holds() {
        assert_eq!(code_span("review_status"), "`review_status`");
        assert_eq!(code_span("a`b"), "`` a`b ``");
        assert_eq!(code_span("``x"), "``` ``x ```");
        // The cell separator and a line break cannot end the cell or the row.
        assert_eq!(code_span("a|b\nc"), "`a\\|b\\u{a}c`");
        assert_eq!(code_span("\u{202e}x"), "`\\u{202e}x`");
    }

    #[test]
    fn cell_text_keeps_prose_and_refuses_tags_and_columns() {
        assert_eq!(
            cell_text("member /status: type changed."),
            "member /status: type changed."
        );
        assert_eq!(
            cell_text("<img src=x> | a & b"),
            "&lt;img src=x&gt; \\| a &amp; b"
        );
    }
}
