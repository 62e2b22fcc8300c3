//! What the agent sees of an admitted instance, and which way values flow: the view a
//! change is classed by (agent fields, failure codes the guard forwards, the direction of
//! a response or a tool's arguments).

use super::*;

/// Which way values flow through the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A response: narrowing breaks, widening may reach the agent.
    Response,
    /// A request (a tool's `inputSchema`): narrowing breaks callers, widening is harmless.
    Request,
}

/// What the agent sees of an admitted instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The agent fields (JSON pointers; `""` is the whole instance).
    pub agent: Vec<String>,
    /// An envelope contract: agent fields come from successes, and `/error/code` of a
    /// failure reaches the agent when it is one of [`ErrorCode::ALL`].
    pub envelope: bool,
    /// Response or request.
    pub direction: Direction,
}

/// The pointer of an envelope's failure code.
pub(super) const FAILURE_CODE: &str = "/error/code";

impl View {
    /// A response whose agent sees `agent` (no envelope).
    pub fn fields(agent: Vec<String>) -> Self {
        Self {
            agent,
            envelope: false,
            direction: Direction::Response,
        }
    }

    /// Whether a change at a location can reach the agent: the location is, lies inside
    /// or holds one of the agent fields, or is the forwarded failure code.
    pub fn visible(&self, pointer: &str) -> bool {
        self.direction == Direction::Response
            && (self
                .agent
                .iter()
                .any(|f| f.is_empty() || pointer == f || inside(pointer, f) || inside(f, pointer))
                || (self.envelope && pointer == FAILURE_CODE))
    }

    /// Whether a location is, or lies inside, an agent field (what the agent receives
    /// whole): members appearing there reach the agent; at an ancestor they do not.
    pub fn reaches(&self, pointer: &str) -> bool {
        self.direction == Direction::Response
            && self
                .agent
                .iter()
                .any(|f| f.is_empty() || pointer == f || inside(pointer, f))
    }

    /// The class of a change that only admits more at `pointer`.
    pub(super) fn loosened(&self, pointer: &str) -> Class {
        if self.visible(pointer) {
            Class::AgentVisible
        } else {
            Class::Compatible
        }
    }

    /// Why a loosening at `pointer` has its class, for the detail.
    pub(super) fn why(&self, pointer: &str) -> &'static str {
        match self.direction {
            Direction::Request => " (a request: arguments accepted before still are)",
            Direction::Response if self.visible(pointer) => "",
            Direction::Response => " (not an agent field: the guard never hands it to the agent)",
        }
    }

    /// Values newly allowed by an `enum` at `pointer`: the forwarded failure codes among
    /// them are agent-visible, the others are turned away by the guard's projection.
    pub(super) fn new_values(
        &self,
        pointer: &str,
        added: &[Value],
    ) -> (Class, &'static str, String) {
        if self.envelope && pointer == FAILURE_CODE && self.direction == Direction::Response {
            let forwarded: Vec<&str> = added
                .iter()
                .filter_map(Value::as_str)
                .filter(|c| ErrorCode::envelope_from_wire(c).is_some())
                .collect();
            return if forwarded.is_empty() {
                (
                    Class::Compatible,
                    "enum_widened",
                    format!(
                        " (not forwarded: the guard admits only {:?} as failure codes)",
                        ErrorCode::ENVELOPE.map(ErrorCode::as_str)
                    ),
                )
            } else {
                (
                    Class::AgentVisible,
                    "failure_code_forwarded",
                    format!(" (the guard forwards {forwarded:?} to the agent)"),
                )
            };
        }
        (
            self.loosened(pointer),
            "enum_widened",
            self.why(pointer).to_owned(),
        )
    }
}

/// Whether the location `pointer` lies strictly inside the location `outer`.
fn inside(pointer: &str, outer: &str) -> bool {
    pointer.len() > outer.len()
        && pointer.starts_with(outer)
        && pointer.as_bytes()[outer.len()] == b'/'
}
