//! Stage 1: transport limits. A body is read through `Read::take(max_bytes + 1)`, so one
//! byte past the limit is a rejection and nothing after it is ever read or buffered.

use std::io::{self, Read};

/// The deepest nesting any limit may allow. Validation, conversion and dropping of a
/// parsed value recurse once per level; this keeps them far from the end of a 2 MiB
/// thread stack. (`serde_json` stops at 128.)
pub const MAX_DEPTH_CEILING: usize = 512;

/// The largest `max_bytes` any limit may allow: 64 MiB. A body is buffered whole, then
/// parsed into a tape of at most three times its size (one 4-byte word per value, three
/// per string with escapes: `["\n",…]` is the worst at 2.8×); validation reads the tape in
/// place. So judging a body takes under 4× its size with the body counted, plus what the agent value copies out (the
/// agent fields) and, for a rejection of up to
/// [`MAX_EXPLAINED_BYTES`](crate::schema::MAX_EXPLAINED_BYTES), its explanation (BENCHMARKS.md
/// has the figures). A contract asking for more is a load error; `airlock validate
/// --max-bytes` above it is a usage error.
pub const MAX_BYTES_CEILING: u64 = 64 * 1024 * 1024;

/// The most a file of a contract folder may hold: 32 MiB. A manifest or a schema file is
/// read whole and parsed into memory; schemas for tool responses are kilobytes, and
/// without a bound a contract could hand the loader a file of any size.
pub const MAX_CONTRACT_FILE_BYTES: u64 = 32 << 20;

/// Size and nesting limits of a contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The largest body accepted, in bytes: 1 to [`MAX_BYTES_CEILING`].
    pub max_bytes: u64,
    /// The deepest nesting of arrays and objects accepted (`{}` is depth 1): 1 to
    /// [`MAX_DEPTH_CEILING`].
    pub max_depth: usize,
}

impl Default for Limits {
    /// 4096 bytes, depth 8: the limits of the shipped example contracts.
    fn default() -> Self {
        Self {
            max_bytes: 4096,
            max_depth: 8,
        }
    }
}

/// What reading a body under a limit can end in, besides the body.
#[derive(Debug)]
pub enum ReadError {
    /// More than `max_bytes` were offered; reading stopped one byte past the limit.
    TooLarge {
        /// The `max_bytes + 1` bytes read before stopping (for the audit digest).
        read: Vec<u8>,
    },
    /// The reader failed: a transport failure, not a property of the body.
    Io(io::Error),
}

/// Read at most `max_bytes` from `reader`.
///
/// # Errors
///
/// [`ReadError::TooLarge`] as soon as byte `max_bytes + 1` arrives (the rest is left
/// unread); [`ReadError::Io`] when the reader fails.
pub fn read_limited<R: Read>(reader: R, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::with_capacity(usize::try_from(max_bytes.min(64 * 1024)).unwrap_or(0) + 1);
    reader
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(ReadError::Io)?;
    if body.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge { read: body });
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that counts what was taken from it and never ends.
    struct Endless {
        served: u64,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            buf.fill(b' ');
            self.served += buf.len() as u64;
            Ok(buf.len())
        }
    }

    #[test]
    fn body_of_exactly_max_bytes_is_read_whole() {
        let body = read_limited(&b"[1,2]"[..], 5).unwrap();
        assert_eq!(body, b"[1,2]");
    }

    #[test]
    fn one_byte_past_the_limit_is_rejected() {
        assert!(matches!(
            read_limited(&b"[1,2] "[..], 5),
            Err(ReadError::TooLarge { read }) if read == b"[1,2] "
        ));
    }

    #[test]
    fn an_endless_stream_is_rejected_after_reading_one_byte_past_the_limit() {
        let mut endless = Endless { served: 0 };
        let result = read_limited(&mut endless, 4096);
        assert!(matches!(result, Err(ReadError::TooLarge { .. })));
        assert_eq!(endless.served, 4097);
    }

    #[test]
    fn a_failing_reader_is_a_transport_error() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::ConnectionReset))
            }
        }
        assert!(matches!(read_limited(Broken, 10), Err(ReadError::Io(_))));
    }
}
