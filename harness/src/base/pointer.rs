//! Where each value of a JSON text starts (line and column), by JSON pointer: findings
//! are located in the schema file as written.

use serde_json::Value;
use std::collections::HashMap;

use crate::cases::escape_token;

/// The line and column (1-based, in characters) where each value of the JSON text
/// `source` starts, by JSON pointer. `source` is known to be valid JSON.
pub fn positions(source: &[u8]) -> HashMap<String, (usize, usize)> {
    struct Frame {
        object: bool,
        index: usize,
        pushed: bool,
    }
    let mut out = HashMap::new();
    let mut path: Vec<String> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let (mut line, mut line_start) = (1, 0);
    let mut expect_key = false;
    let mut i = 0;
    // Columns in characters, counted incrementally (a minified schema is one long line).
    let (mut counted_to, mut counted) = (0usize, 0usize);
    let mut column = |i: usize, line_start: usize| {
        if counted_to < line_start || counted_to > i {
            (counted_to, counted) = (line_start, 0);
        }
        counted += source[counted_to..i]
            .iter()
            .filter(|b| (**b & 0xC0) != 0x80)
            .count();
        counted_to = i;
        counted + 1
    };
    let pointer = |path: &[String]| {
        path.iter().fold(String::new(), |mut p, t| {
            p.push('/');
            p.push_str(t);
            p
        })
    };
    while i < source.len() {
        let c = source[i];
        match c {
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            b' ' | b'\t' | b'\r' | b':' => {}
            b',' => {
                if let Some(frame) = stack.last_mut() {
                    if frame.object {
                        if frame.pushed {
                            path.pop();
                            frame.pushed = false;
                        }
                        expect_key = true;
                    } else {
                        frame.index += 1;
                        path.pop();
                        path.push(frame.index.to_string());
                    }
                }
            }
            b'}' | b']' => {
                if let Some(frame) = stack.pop() {
                    if !frame.object || frame.pushed {
                        path.pop();
                    }
                }
                expect_key = false;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < source.len() && source[i] != b'"' {
                    if source[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if expect_key {
                    let name: String =
                        serde_json::from_slice(&source[start..=i.min(source.len() - 1)])
                            .unwrap_or_default();
                    path.push(escape_token(&name));
                    if let Some(frame) = stack.last_mut() {
                        frame.pushed = true;
                    }
                    expect_key = false;
                } else {
                    out.insert(pointer(&path), (line, column(start, line_start)));
                }
            }
            b'{' | b'[' => {
                out.insert(pointer(&path), (line, column(i, line_start)));
                let object = c == b'{';
                stack.push(Frame {
                    object,
                    index: 0,
                    pushed: false,
                });
                if object {
                    expect_key = true;
                } else {
                    path.push("0".into());
                }
            }
            _ => {
                out.insert(pointer(&path), (line, column(i, line_start)));
                while i + 1 < source.len() && !b",}] \t\r\n".contains(&source[i + 1]) {
                    i += 1;
                }
            }
        }
        i += 1;
    }
    out
}

/// The parent pointer of `pointer` and its last token, unescaped.
pub(crate) fn parent_and_name(pointer: &str) -> (&str, String) {
    let (parent, name) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    (parent, name.replace("~1", "/").replace("~0", "~"))
}

/// Set (or remove, `None`) the member or array item at `pointer`; false when its parent
/// is not there.
pub(crate) fn set_at(value: &mut Value, pointer: &str, new: Option<Value>) -> bool {
    if pointer.is_empty() {
        return match new {
            Some(v) => {
                *value = v;
                true
            }
            None => false,
        };
    }
    let (parent, name) = parent_and_name(pointer);
    match (value.pointer_mut(parent), new) {
        (Some(Value::Object(map)), Some(v)) => {
            map.insert(name, v);
            true
        }
        (Some(Value::Object(map)), None) => map.shift_remove(&name).is_some(),
        (Some(Value::Array(items)), edit) => {
            let Ok(index) = name.parse::<usize>() else {
                return false;
            };
            match edit {
                Some(v) if index < items.len() => items[index] = v,
                Some(v) if index == items.len() => items.push(v),
                None if index < items.len() => {
                    items.remove(index);
                }
                _ => return false,
            }
            true
        }
        _ => false,
    }
}
