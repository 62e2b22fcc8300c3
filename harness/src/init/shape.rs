//! The shape of identifier-like strings (`GHSA-jf85-cpcp-j695`, `4.17.20`): runs of
//! letters and digits between separators, learned from samples as a pattern, and whether
//! another string has the same shape. What `init` writes as a string's `pattern`, and
//! what tells a near miss's string from the samples'.

/// The shape of strings: runs of letters and digits between separator characters, each
/// run with the character classes it uses and its length range.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Shape {
    runs: Vec<Run>,
}

#[derive(Debug, Clone, PartialEq)]
enum Run {
    Word {
        upper: bool,
        lower: bool,
        digit: bool,
        min: usize,
        max: usize,
    },
    Separator(char),
}

fn runs(text: &str) -> Option<Vec<Run>> {
    let mut out: Vec<Run> = Vec::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            let (u, l, d) = (
                c.is_ascii_uppercase(),
                c.is_ascii_lowercase(),
                c.is_ascii_digit(),
            );
            match out.last_mut() {
                Some(Run::Word {
                    upper,
                    lower,
                    digit,
                    min,
                    max,
                }) => {
                    *upper |= u;
                    *lower |= l;
                    *digit |= d;
                    *min += 1;
                    *max += 1;
                }
                _ => out.push(Run::Word {
                    upper: u,
                    lower: l,
                    digit: d,
                    min: 1,
                    max: 1,
                }),
            }
        } else if c.is_ascii_punctuation() {
            out.push(Run::Separator(c));
        } else {
            return None; // spaces, control or non-ASCII: not an identifier-like string
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The shape every text shares (the same separators in the same places), or none.
pub(super) fn shape(texts: &[&str]) -> Option<Shape> {
    let mut merged: Option<Vec<Run>> = None;
    for text in texts {
        let these = runs(text)?;
        merged = Some(match merged {
            None => these,
            Some(so_far) => {
                if so_far.len() != these.len() {
                    return None;
                }
                so_far
                    .into_iter()
                    .zip(these)
                    .map(|(a, b)| match (a, b) {
                        (Run::Separator(x), Run::Separator(y)) if x == y => Some(Run::Separator(x)),
                        (
                            Run::Word {
                                upper,
                                lower,
                                digit,
                                min,
                                max,
                            },
                            Run::Word {
                                upper: u,
                                lower: l,
                                digit: d,
                                min: n,
                                max: m,
                            },
                        ) => Some(Run::Word {
                            upper: upper | u,
                            lower: lower | l,
                            digit: digit | d,
                            min: min.min(n),
                            max: max.max(m),
                        }),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()?
            }
        });
    }
    merged.map(|runs| Shape { runs })
}

/// Whether a single text's shape fits `pattern`: its structure, and each word's length
/// within the pattern's bounds.
pub(super) fn matches_shape(ours: &Shape, pattern: &Shape) -> bool {
    fits(ours, pattern, true)
}

/// The same separators and, run by run, no character class the pattern lacks (lengths
/// aside).
pub(super) fn same_structure(ours: &Shape, pattern: &Shape) -> bool {
    fits(ours, pattern, false)
}

/// Run by run: the same separators, no character class the pattern lacks, and (when
/// `lengths`) each word's length within the pattern's bounds.
fn fits(ours: &Shape, pattern: &Shape, lengths: bool) -> bool {
    ours.runs.len() == pattern.runs.len()
        && ours
            .runs
            .iter()
            .zip(&pattern.runs)
            .all(|(a, b)| match (a, b) {
                (Run::Separator(x), Run::Separator(y)) => x == y,
                (
                    Run::Word {
                        upper,
                        lower,
                        digit,
                        min,
                        ..
                    },
                    Run::Word {
                        upper: u,
                        lower: l,
                        digit: d,
                        min: n,
                        max: m,
                    },
                ) => {
                    (!upper || *u)
                        && (!lower || *l)
                        && (!digit || *d)
                        && (!lengths || (min >= n && min <= m))
                }
                _ => false,
            })
}

impl Shape {
    /// The shape with headroom for values the samples did not show: a word of one fixed
    /// length of 8 or more (a hash, an id) stays fixed; any other may be 1 to twice its
    /// longest (at least 16) long.
    pub(super) fn widened(mut self) -> Shape {
        for run in &mut self.runs {
            if let Run::Word { min, max, .. } = run {
                if !(*min == *max && *min >= 8) {
                    *max = (*max * 2).max(16);
                    *min = 1;
                }
            }
        }
        self
    }

    /// An anchored pattern of bounded classes (linear, as the guard requires).
    pub(super) fn to_pattern(&self) -> String {
        let mut out = String::from("^");
        for run in &self.runs {
            match run {
                Run::Separator(c) => {
                    // Only the metacharacters are escaped (an identity escape such as
                    // `\-` is an error in ECMA-262's Unicode mode).
                    if ".^$*+?()[]{}|\\/".contains(*c) {
                        out.push('\\');
                    }
                    out.push(*c);
                }
                Run::Word {
                    upper,
                    lower,
                    digit,
                    min,
                    max,
                } => {
                    out.push('[');
                    if *upper {
                        out.push_str("A-Z");
                    }
                    if *lower {
                        out.push_str("a-z");
                    }
                    if *digit {
                        out.push_str("0-9");
                    }
                    out.push(']');
                    if min == max {
                        out.push_str(&format!("{{{min}}}"));
                    } else {
                        out.push_str(&format!("{{{min},{max}}}"));
                    }
                }
            }
        }
        out.push('$');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_generalise_identifiers_and_refuse_other_shapes() {
        let shape = shape(&["GHSA-jf85-cpcp-j695", "GHSA-29mw-wpgm-hmr9"]).unwrap();
        assert_eq!(
            shape.to_pattern(),
            "^[A-Z]{4}-[a-z0-9]{4}-[a-z]{4}-[a-z0-9]{4}$"
        );
        for (other, fits) in [
            ("GHSA-ab12-cdef-9x9x", true),
            ("CVE-2024-1234", false),
            ("GHSA-JF85-CPCP-J695", false),
        ] {
            let ours = super::shape(&[other]).unwrap();
            assert_eq!(matches_shape(&ours, &shape), fits, "{other}");
        }
        assert_eq!(
            super::shape(&["4.17.20", "10.2.1"]).unwrap().to_pattern(),
            r"^[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}$"
        );
        assert!(super::shape(&["a b"]).is_none());
        assert!(super::shape(&["a-b", "a.b"]).is_none());
    }
}
