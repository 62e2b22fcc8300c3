//! A fuzzer's seed bodies: held, or built when used (the bodies sized from a large
//! `max_bytes`, as [`adversary::generate_later`] leaves them).

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use crate::adversary;
use crate::cases::{Case, Upstream};

/// A seed's body: held, or, for a body sized from a large `max_bytes` (padded to the
/// limit and past it, arrays grown far past it), built each time it is used, as `check`
/// builds it when its case runs. With `max_bytes` at 8 MiB, what `mcp import` writes for
/// an unbounded schema, each base has some 40 MiB of those: held, the nine contracts of
/// the memory MCP server took 3.9 GB before the first input.
#[derive(Clone)]
pub(crate) enum SeedBody {
    /// The bytes.
    Held(Vec<u8>),
    /// How to build them, and the start of them once a splice has read it.
    Later(adversary::Later, OnceLock<Vec<u8>>),
}

/// How far into its source a splice reads: from an offset below 65 536 (a `u16`), at most
/// 255 bytes (a `u8`). Of a longer source, the first `SPLICE_REACH` bytes give every
/// splice exactly the bytes the whole would: the offset is taken modulo the length plus
/// one, which leaves any `u16` as it is once the length is this large.
pub(super) const SPLICE_REACH: usize = u16::MAX as usize + u8::MAX as usize;

impl SeedBody {
    /// The body of `case` (an [`adversary::generate_later`] case), taken out of it (its
    /// body is left empty): its bytes, or how `later` builds them; `None` for a case with
    /// no body.
    pub(crate) fn take(case: &mut Case, later: &adversary::LaterBodies) -> Option<Self> {
        let Upstream::Body(bytes) = &mut case.upstream else {
            return None;
        };
        let bytes = std::mem::take(bytes);
        Some(match later.build_of(&case.id) {
            Some(build) => Self::Later(build, OnceLock::new()),
            None => Self::Held(bytes),
        })
    }

    /// The bytes, built when they are not held.
    pub(crate) fn bytes(&self) -> Cow<'_, [u8]> {
        match self {
            Self::Held(bytes) => Cow::Borrowed(bytes),
            Self::Later(build, _) => Cow::Owned(build()),
        }
    }

    /// What an [`Edit::Splice`](super::Edit::Splice) reads of it: all of a held body; of
    /// one built later, its first [`SPLICE_REACH`] bytes, built once and kept (64 KiB,
    /// where the whole is megabytes: a splice from it then costs what one from a held body
    /// does).
    pub(crate) fn splice_source(&self) -> &[u8] {
        match self {
            Self::Held(bytes) => bytes,
            Self::Later(build, start) => start.get_or_init(|| {
                let mut bytes = build();
                bytes.truncate(SPLICE_REACH);
                bytes.shrink_to_fit();
                bytes
            }),
        }
    }

    /// Whether the bytes are built each time.
    pub(crate) fn is_later(&self) -> bool {
        matches!(self, Self::Later(..))
    }

    /// How many bytes it holds.
    #[cfg(test)]
    pub(crate) fn held_len(&self) -> usize {
        match self {
            Self::Held(bytes) => bytes.len(),
            Self::Later(_, start) => start.get().map_or(0, Vec::len),
        }
    }
}

impl fmt::Debug for SeedBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Held(bytes) => write!(f, "Held({} bytes)", bytes.len()),
            Self::Later(..) => f.write_str("Later"),
        }
    }
}
