//! A value the boundary and calendar variants try at a member.

use serde_json::Value;

/// One value tried at a member: class, id suffix, the new value as raw JSON text.
pub(super) struct Trial {
    pub(super) class: &'static str,
    pub(super) suffix: String,
    pub(super) raw: String,
    /// For a date-time: the instant the text stands for, written validly (a day past its
    /// month's end rolled over into the next month, as a lax parser would read it). A
    /// member under a `fresh` check gets the request's `now` moved with it, so the
    /// calendar decides, not the age; `None`: `now` stays.
    pub(super) instant: Option<String>,
}

impl Trial {
    pub(super) fn new(
        class: &'static str,
        suffix: impl Into<String>,
        raw: impl Into<String>,
    ) -> Self {
        Self {
            class,
            suffix: suffix.into(),
            raw: raw.into(),
            instant: None,
        }
    }

    /// A date-time `text` standing for the instant `instant` names (see [`Trial::instant`]).
    pub(super) fn time(
        class: &'static str,
        suffix: impl Into<String>,
        text: &str,
        instant: &str,
    ) -> Self {
        Self {
            instant: Some(instant.to_owned()),
            ..Self::string(class, suffix, text)
        }
    }

    pub(super) fn string(class: &'static str, suffix: impl Into<String>, text: &str) -> Self {
        Self::new(class, suffix, Value::String(text.to_owned()).to_string())
    }
}
