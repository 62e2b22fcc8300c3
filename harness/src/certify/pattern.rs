//! Two `pattern`s compared as languages: a string one matches (anywhere, as JSON Schema
//! says) and the other does not, found by a breadth-first walk of the product of their lazy
//! DFAs — the shortest such string, or a proof there is none. Bounded; undecided past it.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use std::collections::{HashSet, VecDeque};

/// Product states walked before the question is left undecided.
const MAX_STATES: usize = 20_000;
/// Each lazy DFA's cache; a walk that would clear it (and so forget the states it holds)
/// is left undecided.
const CACHE_BYTES: usize = 8 * 1024 * 1024;

/// What strings one pattern matches and another does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Only {
    /// None: proved.
    Nothing,
    /// This one (the shortest found).
    Example(String),
    /// Not decided (a construct the DFA does not build, a bound reached).
    Undecided,
}

/// A pattern as the guard reads it (ECMA 262 translated as jsonschema does), as a lazy
/// DFA that searches anywhere in the text.
struct Automaton {
    dfa: DFA,
    cache: Cache,
}

impl Automaton {
    fn new(pattern: &str) -> Option<Self> {
        let translated = jsonschema_regex::to_rust_regex(pattern).ok()?;
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .cache_capacity(CACHE_BYTES),
            )
            .syntax(syntax::Config::new().utf8(true))
            .thompson(thompson::Config::new().utf8(true))
            .build(&translated)
            .ok()?;
        let cache = dfa.create_cache();
        Some(Self { dfa, cache })
    }

    fn start(&mut self) -> Option<LazyStateID> {
        self.dfa
            .start_state_forward(&mut self.cache, &Input::new("").anchored(Anchored::No))
            .ok()
    }

    fn next(&mut self, state: LazyStateID, byte: u8) -> Option<LazyStateID> {
        let next = self.dfa.next_state(&mut self.cache, state, byte).ok()?;
        let kept = self.cache.clear_count() == 0;
        (kept && !next.is_quit() && !next.is_unknown()).then_some(next)
    }

    /// Whether a match has ended by the end of the text.
    fn ends(&mut self, state: LazyStateID) -> Option<bool> {
        let eoi = self.dfa.next_eoi_state(&mut self.cache, state).ok()?;
        (!eoi.is_quit()).then_some(eoi.is_match())
    }
}

/// A string `a` matches and `b` does not (each searched anywhere in the string).
pub(crate) fn only_in(a: &str, b: &str) -> Only {
    match (Automaton::new(a), Automaton::new(b)) {
        (Some(a), Some(b)) => walk(a, b).unwrap_or(Only::Undecided),
        _ => Only::Undecided,
    }
}

/// The walk: a product state is both DFAs' states and whether each has matched already (a
/// match anywhere is for good). `None` when a bound or a quit state ends it.
fn walk(mut a: Automaton, mut b: Automaton) -> Option<Only> {
    type State = (LazyStateID, bool, LazyStateID, bool);
    let start: State = (a.start()?, false, b.start()?, false);
    let mut seen: HashSet<State> = HashSet::from([start]);
    let mut todo: VecDeque<(State, Vec<u8>)> = VecDeque::from([(start, Vec::new())]);
    let mut lost = false;
    while let Some(((sa, ma, sb, mb), text)) = todo.pop_front() {
        // A match state says a match ended before the last byte (for good); the end of
        // the text may still end one (a `$`) only for this very text.
        let (ma, mb) = (ma || sa.is_match(), mb || sb.is_match());
        if mb {
            // `b` matches every continuation: nothing only `a` matches from here.
            continue;
        }
        if (ma || a.ends(sa)?) && !b.ends(sb)? {
            match String::from_utf8(text) {
                Ok(s) => return Some(Only::Example(s)),
                Err(_) => {
                    lost = true;
                    continue;
                }
            }
        }
        if sa.is_dead() && !ma {
            continue;
        }
        // One byte of each class either DFA tells apart.
        let bytes = (0..=u8::MAX).filter(|&x| {
            x == 0
                || a.dfa.byte_classes().get(x) != a.dfa.byte_classes().get(x - 1)
                || b.dfa.byte_classes().get(x) != b.dfa.byte_classes().get(x - 1)
        });
        for byte in bytes.collect::<Vec<u8>>() {
            let next = (a.next(sa, byte)?, ma, b.next(sb, byte)?, mb);
            if seen.insert(next) {
                if seen.len() > MAX_STATES {
                    return None;
                }
                let mut longer = text.clone();
                longer.push(byte);
                todo.push_back((next, longer));
            }
        }
    }
    // A string only `a` matches that is no UTF-8 says nothing about JSON strings.
    Some(if lost { Only::Undecided } else { Only::Nothing })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_widened_pattern_matches_nothing_the_old_one_alone_matches() {
        let (old, new) = ("^[0-9a-f]{4}$", "^[0-9a-f]{4}([0-9a-f]{2})?$");
        assert_eq!(only_in(old, new), Only::Nothing);
        let Only::Example(s) = only_in(new, old) else {
            panic!()
        };
        assert_eq!(s.len(), 6);
    }

    #[test]
    fn the_shortest_string_one_pattern_alone_matches_is_found() {
        let old = "^[0-9]{1,6}$";
        let new = "^([0-9]{1,5}|[0-8][0-9]{5}|9[0-8][0-9]{4}|99[0-8][0-9]{3}|999[0-8][0-9]{2}|9999[0-8][0-9]|99999[0-8]|[0-9]{7,9})$";
        assert_eq!(only_in(old, new), Only::Example("999999".into()));
        assert!(matches!(only_in(new, old), Only::Example(s) if s.len() == 7));
    }

    #[test]
    fn unanchored_patterns_match_anywhere() {
        assert_eq!(only_in("ab", "b"), Only::Nothing);
        assert_eq!(only_in("b", "ab"), Only::Example("b".into()));
        assert_eq!(only_in("^x", "x"), Only::Nothing);
        assert_eq!(only_in("^9{2}$", "^9$"), Only::Example("99".into()));
    }
}
