//! Report primitives every capability's renderings share: terminal and Markdown
//! escaping, the SARIF envelope, paths and lines as a report shows them, and locations
//! that do not move with the seed.

use serde_json::{json, Value};
use std::path::Path;

/// A SARIF 2.1.0 log of one run of the tool `name` (`airlock`, `airlock lint`, …): its
/// rules and results, pretty-printed.
pub(crate) fn sarif_log(name: &str, rules: Vec<Value>, results: Vec<Value>) -> String {
    sarif_run_log(name, rules, results, serde_json::Map::new())
}

/// [`sarif_log`] with more members of the run object (`properties`, `invocations`).
pub(crate) fn sarif_run_log(
    name: &str,
    rules: Vec<Value>,
    results: Vec<Value>,
    more: serde_json::Map<String, Value>,
) -> String {
    let mut run = json!({
        "tool": {"driver": {
            "name": name,
            "version": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }},
        "results": results,
    });
    if let Value::Object(members) = &mut run {
        members.extend(more);
    }
    let sarif = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    });
    serde_json::to_string_pretty(&sarif).unwrap_or_default()
}

/// `text` safe to print on a terminal, and `text` as it is unless a terminal would act on
/// it: the guard's own escaping, which its diagnostics use too.
pub use airlock_guard::{printable, visible};

/// `text` cut after `max` characters, with `…` where the rest was: how a report quotes
/// text an adapter, a body or a contract chose, so that no quote grows with its input.
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]).into(),
        None => text.into(),
    }
}

/// The most characters of one finding's message a report keeps ([`clip`]).
pub const MAX_MESSAGE_CHARS: usize = 2000;

/// The most bytes of JSON text one value a finding shows (the reference's agent value, the
/// adapter's) may take; a larger one is kept as its first [`MAX_MESSAGE_CHARS`] characters
/// and its size, as a string.
pub const MAX_VALUE_BYTES: usize = 16 * 1024;

/// `value` for a report: as it is, or, when its JSON text is over [`MAX_VALUE_BYTES`], a
/// string holding the start of that text and its size. A thousand findings on answers of
/// a megabyte each keep a few megabytes, not a gigabyte.
pub fn bounded_value(value: Value) -> Value {
    /// The JSON text's first bytes and its length, without holding the rest.
    #[derive(Default)]
    struct Measure {
        head: Vec<u8>,
        len: usize,
    }
    impl std::io::Write for Measure {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let room = (MAX_VALUE_BYTES + 1).saturating_sub(self.head.len());
            self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
            self.len += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut measure = Measure::default();
    if serde_json::to_writer(&mut measure, &value).is_err() || measure.len <= MAX_VALUE_BYTES {
        return value;
    }
    let head = match std::str::from_utf8(&measure.head) {
        Ok(text) => text,
        // Cut inside a character: up to it.
        Err(e) => std::str::from_utf8(&measure.head[..e.valid_up_to()]).unwrap_or_default(),
    };
    Value::String(format!(
        "{} ({} bytes of JSON in all, cut)",
        clip(head, MAX_MESSAGE_CHARS),
        measure.len
    ))
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
    let source = airlock_guard::read_contract_file(file).ok()?;
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

/// `text` as a Markdown code span for a table cell: [`visible`], the cell separator
/// escaped, and fenced by more backticks than any run inside it, so nothing in it can
/// end the span, the cell or the row. A plain name comes out as `` `name` ``.
pub fn code_span(text: &str) -> String {
    let text = visible(text).replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    if longest == 0 {
        return format!("`{text}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}

/// Prose in a Markdown table cell: [`visible`], with the cell separator and HTML's
/// `<`, `>` and `&` escaped (no tag, entity or extra column). Plain prose is unchanged;
/// [`markdown_text`] is for text that must render literally.
pub fn cell_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in visible(text).chars() {
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

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A table of a report, rendered as Markdown (for a pull request) or as aligned text
/// (for a terminal). Its cells are already escaped for the rendering: [`code_span`],
/// [`cell_text`] or [`markdown_text`] for Markdown, [`printable`] for a terminal.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    columns: Vec<(&'static str, Align, usize)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns: title, alignment, and the least width of the text
    /// rendering.
    pub(crate) fn new(columns: &[(&'static str, Align, usize)]) -> Self {
        Self {
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    /// One row, a cell per column.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(cells);
    }

    /// The Markdown table: the titles, the alignment row, a line per row.
    pub(crate) fn markdown(&self) -> String {
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut out = String::from("|");
            for cell in cells {
                out.push(' ');
                out.push_str(cell);
                out.push_str(" |");
            }
            out.push('\n');
            out
        };
        let mut out = line(&mut self.columns.iter().map(|c| c.0));
        out.push('|');
        for (_, align, _) in &self.columns {
            out.push_str(match align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(&mut row.iter().map(String::as_str)));
        }
        out
    }

    /// The text table: columns as wide as their widest cell (at least their least
    /// width), one space apart.
    pub(crate) fn text(&self) -> String {
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|i| {
                let (title, _, least) = self.columns[i];
                self.rows
                    .iter()
                    .map(|row| row[i].chars().count())
                    .chain([title.chars().count(), least])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut out = String::new();
            for (i, cell) in cells.enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let pad = widths[i].saturating_sub(cell.chars().count());
                match self.columns[i].1 {
                    Align::Left => {
                        out.push_str(cell);
                        out.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        out.extend(std::iter::repeat_n(' ', pad));
                        out.push_str(cell);
                    }
                }
            }
            out.push('\n');
            out
        };
        let mut out = line(&mut self.columns.iter().map(|c| c.0));
        for row in &self.rows {
            out.push_str(&line(&mut row.iter().map(String::as_str)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_at_a_character_and_marks_the_cut() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("ab", 0), "…");
    }

    #[test]
    fn a_value_over_the_bound_is_its_start_and_size() {
        let small = serde_json::json!({"data": {"x": "é".repeat(100)}});
        assert_eq!(bounded_value(small.clone()), small);
        let big = serde_json::json!({"data": {"x": "é".repeat(MAX_VALUE_BYTES)}});
        let len = big.to_string().len();
        let Value::String(cut) = bounded_value(big) else {
            panic!("not cut")
        };
        assert!(cut.starts_with(r#"{"data":{"x":"éé"#), "{cut:.40}");
        assert!(
            cut.ends_with(&format!("… ({len} bytes of JSON in all, cut)")),
            "{cut}"
        );
        assert_eq!(
            cut.chars().filter(|&c| c == 'é').count(),
            MAX_MESSAGE_CHARS - 14
        );
    }

    #[test]
    fn a_code_span_cannot_be_ended_by_what_it_holds() {
        assert_eq!(code_span("review_status"), "`review_status`");
        assert_eq!(code_span("a`b"), "`` a`b ``");
        assert_eq!(code_span("``x"), "``` ``x ```");
        // The cell separator and a line break cannot end the cell or the row.
        assert_eq!(code_span("a|b\nc"), "`a\\|b\\u{a}c`");
        assert_eq!(code_span("\u{202e}x"), "`\\u{202e}x`");
        // Ordinary text with backslashes is shown as it is.
        assert_eq!(code_span(r#""^\\d+$""#), r#"`"^\\d+$"`"#);
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

    #[test]
    fn a_table_renders_as_markdown_and_as_aligned_text() {
        let mut table = Table::new(&[("name", Align::Left, 6), ("n", Align::Right, 3)]);
        table.row(vec!["a".into(), "12".into()]);
        table.row(vec!["longer".into(), "3".into()]);
        assert_eq!(
            table.markdown(),
            "| name | n |\n|---|---:|\n| a | 12 |\n| longer | 3 |\n"
        );
        assert_eq!(table.text(), "name     n\na       12\nlonger   3\n");
    }
}
