//! `airlock init --lines`: a `kind = "lines"` contract from a command's outputs. The line
//! grammar (separator, line ending, keys, a line bound) is read off the samples, every key
//! is mapped into `data` (integers and times normalised), and each value's schema is the
//! shape the samples share as a `pattern` (with headroom), as near-miss learning infers
//! an identifier's shape; the samples are the accepted fixtures, as printed.

use airlock_guard::Request;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::path::Path;

use super::contract::{bindings, envelope, manifest, request_id_pattern, toml_string};
use super::infer::infer;
use super::shape::shape;
use super::{
    agent_fields, read_given, read_near_misses, review_fields, write_plan, Given, InitError,
    InitOptions, Plan, Scaffold, Written,
};
use crate::cases::escape_token;

/// The longest key the grammar admits, in bytes.
const KEY_MAX: usize = 128;

/// One command output: its file, its bytes, its request, and its `(key, value)` lines.
struct Output<'a> {
    path: &'a Path,
    bytes: Vec<u8>,
    request: Request,
    lines: Vec<(String, String)>,
}

/// How a key's values are normalised into `data`.
#[derive(Clone, Copy, PartialEq)]
enum Normalise {
    None,
    Integer,
    Time,
}

/// Scaffold a lines contract from `options.samples` (a command's outputs).
pub(super) fn init_lines(
    options: &InitOptions,
    request: &Request,
    scaffold: &mut Scaffold,
) -> Result<(), InitError> {
    let texts = read_texts(options, request)?;
    let ending = if texts.iter().any(|(_, text, _)| text.contains("\r\n")) {
        "\r\n"
    } else {
        "\n"
    };
    let separator = separator(&texts, ending)?;
    let outputs: Vec<Output<'_>> = texts
        .into_iter()
        .map(|(path, text, request)| {
            let lines = split(path, &text, ending, separator)?;
            Ok(Output {
                path,
                bytes: text.into_bytes(),
                request,
                lines,
            })
        })
        .collect::<Result<_, InitError>>()?;
    let keys: Vec<String> = outputs[0].lines.iter().map(|(k, _)| k.clone()).collect();
    for output in &outputs {
        same_keys(output, &keys)?;
    }
    let longest_line = outputs
        .iter()
        .flat_map(|o| {
            o.lines
                .iter()
                .map(|(k, v)| k.len() + separator.len() + v.len())
        })
        .max()
        .unwrap_or(1);
    let max_line_bytes = (longest_line * 2).clamp(64, 65536);
    scaffold.inferred.push(format!(
        "grammar: keys {keys:?}, separator {separator:?}, line ending {}, \
         max_line_bytes {max_line_bytes} (2 × the longest line, at least 64)",
        if ending == "\r\n" { "CRLF" } else { "LF" }
    ));

    let mut fields: Vec<(String, String, Normalise)> = Vec::new();
    for key in &keys {
        let values: Vec<&str> = outputs.iter().map(|o| value_of(o, key)).collect();
        let base = key.replace('/', "_");
        let mut field = base.clone();
        let mut n = 2;
        while fields.iter().any(|(f, _, _)| *f == field) {
            field = format!("{base}_{n}");
            n += 1;
        }
        fields.push((field, key.clone(), normalise_of(&values)));
    }
    let data: Vec<Value> = outputs
        .iter()
        .map(|o| {
            let mut data = Map::new();
            for (field, key, normalise) in &fields {
                let text = value_of(o, key);
                let value = match normalise {
                    Normalise::Integer => text.parse::<i64>().map_or(json!(text), |n| json!(n)),
                    _ => json!(text),
                };
                data.insert(field.clone(), value);
            }
            Value::Object(data)
        })
        .collect();
    let mut properties = Map::new();
    for (field, key, normalise) in &fields {
        let values: Vec<Value> = data.iter().filter_map(|d| d.get(field)).cloned().collect();
        let at = format!("/data/{}", escape_token(field));
        let how = match normalise {
            Normalise::Integer => ", an integer (integer_from_string)",
            Normalise::Time => ", normalised to UTC (rfc3339_utc)",
            Normalise::None => "",
        };
        scaffold
            .inferred
            .push(format!("{at}: mapped from key {key:?}{how}"));
        let schema = value_schema(&values, *normalise, &at, scaffold);
        properties.insert(field.clone(), schema);
    }
    let names: Vec<&String> = fields.iter().map(|(f, _, _)| f).collect();
    let data_schema = json!({
        "type": "object",
        "additionalProperties": false,
        "required": names,
        "properties": properties,
    });
    let requests: Vec<Request> = outputs.iter().map(|o| o.request.clone()).collect();
    let agent = agent_fields(options, &data)?;
    let checks = bindings(&data, &requests, &agent, scaffold);
    review_fields(&data_schema, &agent, &checks, scaffold);

    let largest = outputs.iter().map(|o| o.bytes.len()).max().unwrap_or(0);
    let limits = super::limits_for(largest, 1, scaffold);
    let id_pattern = request_id_pattern(outputs.iter().map(|o| o.request.request_id.as_str()));
    let input = input_tables(&keys, separator, ending, max_line_bytes, &fields);
    let manifest = manifest(&options.tool, &input, limits, &agent, &checks, &[]);
    let schema = envelope(&options.tool, data_schema, &id_pattern);
    let unlearned = read_near_misses(&options.tool, &options.near_misses, request, false)?;
    let accepted = outputs
        .iter()
        .enumerate()
        .map(|(n, o)| Written {
            name: format!("sample_{n:02}"),
            bytes: o.bytes.clone(),
            request: &o.request,
            sample: o.path,
        })
        .collect();
    let cost = outputs
        .iter()
        .map(|o| (o.bytes.len() as u64).saturating_mul(o.lines.len() as u64 * 2))
        .fold(0, u64::saturating_add);
    let plan = Plan {
        files: vec![
            ("v1.schema.json", super::pretty(&schema)),
            ("contract.toml", manifest.into_bytes()),
        ],
        accepted,
        rejected: Vec::new(),
        unlearned,
        cost,
    };
    write_plan(options, request, &plan, scaffold)
}

/// Read every sample as UTF-8 text with at least one line, each with its request
/// (`NAME.request.json` beside it, `NAME` the file name without its extension).
fn read_texts<'a>(
    options: &'a InitOptions,
    request: &Request,
) -> Result<Vec<(&'a Path, String, Request)>, InitError> {
    let mut out = Vec::new();
    let what = "a sample is a command's output, at most 64 MiB";
    for sample in read_given(&options.samples, request, true, what) {
        let Given {
            path,
            request: own,
            bytes,
            ..
        } = sample?;
        let fail = |reason: &str| InitError::Lines {
            path: path.clone(),
            reason: reason.to_owned(),
        };
        if bytes.is_empty() {
            return Err(fail(
                "an empty output: give what the command prints, at least one `key=value` line",
            ));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| fail("not UTF-8: a command output is read as UTF-8 text"))?;
        out.push((path.as_path(), text, own));
    }
    if out.is_empty() {
        return Err(InitError::NoSamples);
    }
    Ok(out)
}

/// The separator every line of every sample has: `=` where each line's key before its
/// first `=` is a key, else `: `.
fn separator(texts: &[(&Path, String, Request)], ending: &str) -> Result<&'static str, InitError> {
    let fits = |separator: &str| {
        texts.iter().all(|(_, text, _)| {
            lines_of(text, ending).iter().all(|line| {
                line.split_once(separator)
                    .is_some_and(|(key, _)| is_key(key, separator))
            })
        })
    };
    for separator in ["=", ": "] {
        if fits(separator) {
            return Ok(separator);
        }
    }
    let path = texts
        .iter()
        .find(|(_, text, _)| {
            lines_of(text, ending).iter().any(|line| {
                !["=", ": "]
                    .iter()
                    .any(|s| line.split_once(s).is_some_and(|(key, _)| is_key(key, s)))
            })
        })
        .map_or(texts[0].0, |(p, _, _)| p);
    Err(InitError::Lines {
        path: path.to_path_buf(),
        reason: "not one `key=value` or `key: value` per line (a key: 1 to 128 bytes, no \
                 white space or control character): init --lines reads only that grammar"
            .to_owned(),
    })
}

/// The lines of `text` without their endings (the last one ends the text).
fn lines_of<'t>(text: &'t str, ending: &str) -> Vec<&'t str> {
    let body = text.strip_suffix(ending).unwrap_or(text);
    body.split(ending).collect()
}

fn is_key(key: &str, separator: &str) -> bool {
    !key.is_empty()
        && key.len() <= KEY_MAX
        && !key.contains(separator)
        && !key.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The `(key, value)` lines of one output: it ends with the line ending, and no key comes
/// twice.
fn split(
    path: &Path,
    text: &str,
    ending: &str,
    separator: &str,
) -> Result<Vec<(String, String)>, InitError> {
    let fail = |reason: String| InitError::Lines {
        path: path.to_path_buf(),
        reason,
    };
    if !text.ends_with(ending) {
        let name = if ending == "\r\n" { "CRLF" } else { "LF" };
        return Err(fail(format!(
            "its last line does not end with {name}: the grammar requires every line to \
             end (save the output as the command prints it)"
        )));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for line in lines_of(text, ending) {
        let (key, value) = line.split_once(separator).unwrap_or((line, ""));
        if out.iter().any(|(k, _)| k == key) {
            return Err(fail(format!(
                "key {key:?} comes twice: the grammar admits each key once"
            )));
        }
        out.push((key.to_owned(), value.to_owned()));
    }
    Ok(out)
}

/// Every output has the first one's keys (each key once, none other).
fn same_keys(output: &Output<'_>, keys: &[String]) -> Result<(), InitError> {
    let theirs: Vec<&String> = output.lines.iter().map(|(k, _)| k).collect();
    let missing = keys.iter().find(|k| !theirs.contains(k));
    let other = theirs.iter().find(|k| !keys.contains(k));
    let reason = match (missing, other) {
        (Some(key), _) => format!("it lacks key {key:?}: every output must print every key"),
        (_, Some(key)) => {
            format!("key {key:?} is in no other sample: every output must print the same keys")
        }
        (None, None) => return Ok(()),
    };
    Err(InitError::Lines {
        path: output.path.to_path_buf(),
        reason,
    })
}

fn value_of<'o>(output: &'o Output<'_>, key: &str) -> &'o str {
    output
        .lines
        .iter()
        .find(|(k, _)| k == key)
        .map_or("", |(_, v)| v.as_str())
}

/// Integers (`-7`, `42`: no sign `+`, no leading zero, within 2^53), times (RFC 3339 with
/// `T`) or text.
fn normalise_of(values: &[&str]) -> Normalise {
    let integer = |t: &str| {
        let digits = t.strip_prefix('-').unwrap_or(t);
        !digits.is_empty()
            && digits.len() <= 15
            && digits.chars().all(|c| c.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && t != "-0"
    };
    let time = |t: &str| t.contains('T') && t.parse::<airlock_guard::jiff::Timestamp>().is_ok();
    if values.iter().all(|t| integer(t)) {
        Normalise::Integer
    } else if values.iter().all(|t| time(t)) {
        Normalise::Time
    } else {
        Normalise::None
    }
}

/// A value's schema: integers and times as init infers them, text by the shape every
/// sample shares (a `pattern`, widened), else a bounded string.
fn value_schema(
    values: &[Value],
    normalise: Normalise,
    at: &str,
    scaffold: &mut Scaffold,
) -> Value {
    let texts: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    if normalise != Normalise::None || texts.len() != values.len() {
        return infer(values, at, scaffold);
    }
    match shape(&texts) {
        Some(shape) => {
            let pattern = shape.widened().to_pattern();
            scaffold.review.push(format!(
                "{at}: pattern {pattern} guessed from {} sample values: widen it where the \
                 command can print other characters or lengths",
                texts.len()
            ));
            json!({"type": "string", "pattern": pattern})
        }
        None => infer(values, at, scaffold),
    }
}

/// The `[input]` tables: the grammar and one mapping per key.
fn input_tables(
    keys: &[String],
    separator: &str,
    ending: &str,
    max_line_bytes: usize,
    fields: &[(String, String, Normalise)],
) -> String {
    let q = |text: &str| toml_string(text);
    let mut out = format!(
        "[input]\nkind = \"lines\"\nseparator = {}\nline_ending = {}\nmax_line_bytes = {max_line_bytes}\nkeys = [{}]\n",
        q(separator),
        // Escaped by hand: a TOML writer spells a newline as a multi-line string.
        if ending == "\r\n" { "\"\\r\\n\"" } else { "\"\\n\"" },
        keys.iter().map(|k| q(k)).collect::<Vec<_>>().join(", ")
    );
    for (field, key, normalise) in fields {
        let _ = write!(
            out,
            "\n[[input.map]]\nfield = {}\nfrom = {}\n",
            q(field),
            q(&format!("/{}", escape_token(key)))
        );
        match normalise {
            Normalise::Integer => out.push_str("normalise = \"integer_from_string\"\n"),
            Normalise::Time => out.push_str("normalise = \"rfc3339_utc\"\n"),
            Normalise::None => {}
        }
    }
    out.push('\n');
    out
}
