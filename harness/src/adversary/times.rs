//! Date-times at their edges, in every spelling a hand-written time parser might read
//! differently: 0 to 9 fraction digits and offsets across their range (the same instant),
//! the calendar's edges (leap days, month ends, years 0001 and 9999) and their wrong
//! neighbours, a fraction filling `maxLength`, and the freshness edges below a second.
//! The trials go to `boundary_valid`, `date_time_neighbour` and `string_edge` through
//! [`super::boundary`]; the reference decides each.

use airlock_guard::jiff::{tz::Offset, SignedDuration, Timestamp};

use super::trial::Trial;
use crate::cases::Expectation;

/// Offsets (in minutes) a date-time is rewritten at, the instant kept.
const OFFSETS: [i32; 6] = [
    -(23 * 60 + 59),
    -12 * 60,
    0,
    5 * 60 + 30,
    14 * 60,
    23 * 60 + 59,
];

/// Fraction digits filled in when a date-time is written with more than it has.
const FRACTION: &str = "123456789";

/// `time` written at `offset` minutes with `digits` fraction digits: its own nanoseconds
/// first, then [`FRACTION`]'s when `fill` (a later instant), else zeros (the same one).
pub(crate) fn render(
    time: Timestamp,
    offset_minutes: i32,
    digits: usize,
    fill: bool,
) -> Option<String> {
    let offset = Offset::from_seconds(offset_minutes * 60).ok()?;
    let civil = offset.to_datetime(time);
    let mut text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        civil.year(),
        civil.month(),
        civil.day(),
        civil.hour(),
        civil.minute(),
        civil.second()
    );
    if digits > 0 {
        let nanos = format!("{:09}", civil.subsec_nanosecond());
        let mut fraction = nanos.trim_end_matches('0').to_owned();
        if fill && fraction.len() < digits {
            fraction.push_str(&FRACTION[fraction.len()..digits.min(9)]);
        }
        fraction.truncate(digits);
        while fraction.len() < digits {
            fraction.push('0');
        }
        text.push('.');
        text.push_str(&fraction);
    }
    if offset_minutes == 0 {
        text.push('Z');
    } else {
        let sign = if offset_minutes < 0 { '-' } else { '+' };
        let m = offset_minutes.abs();
        text.push_str(&format!("{sign}{:02}:{:02}", m / 60, m % 60));
    }
    Some(text)
}

pub(super) fn date_time_trials(s: &str, out: &mut Vec<Trial>) {
    let Ok(time) = s.parse::<Timestamp>() else {
        return;
    };
    // Whole seconds, so that added digits move the instant by under a second.
    let whole = Timestamp::from_second(time.as_second()).unwrap_or(time);
    for digits in 0..=9 {
        if let Some(text) = render(whole, 0, digits, true) {
            out.push(Trial::string(
                "boundary_valid",
                format!("fraction_digits:{digits}"),
                &text,
            ));
        }
    }
    let significant = format!("{:09}", time.subsec_nanosecond())
        .trim_end_matches('0')
        .len();
    for offset in OFFSETS {
        if let Some(text) = render(time, offset, significant, false) {
            out.push(Trial::string(
                "boundary_valid",
                format!("offset:{offset:+}min"),
                &text,
            ));
        }
    }
    // Ten digits: below a nanosecond, still RFC 3339.
    if let Some(text) = render(whole, 0, 9, true) {
        out.push(Trial::string(
            "date_time_neighbour",
            "fraction_digits:10",
            &text.replace('Z', "1Z"),
        ));
    }
    let date = &s[..s.len().min(10)];
    let year: i32 = date.get(..4).and_then(|y| y.parse().ok()).unwrap_or(2026);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let rest = &s[s.len().min(10)..];
    let next_day = |y: i16, m: i8, d: i8| rolled(y, m, d + 1).map(|day| format!("{day}T00:00:00Z"));
    for (suffix, text, instant) in [
        (
            "day_past_month_end:11-31",
            format!("{year:04}-11-31{rest}"),
            rolled(year as i16, 11, 31).map(|d| format!("{d}{rest}")),
        ),
        (
            "day_past_month_end:04-31",
            format!("{year:04}-04-31{rest}"),
            rolled(year as i16, 4, 31).map(|d| format!("{d}{rest}")),
        ),
        (
            "day_past_month_end:02-29",
            format!("{:04}-02-29{rest}", if leap { year + 1 } else { year }),
            rolled((if leap { year + 1 } else { year }) as i16, 2, 29)
                .map(|d| format!("{d}{rest}")),
        ),
        (
            "hour_24",
            format!("{date}T24:00:00Z"),
            date.parse::<airlock_guard::jiff::civil::Date>()
                .ok()
                .and_then(|d| next_day(d.year(), d.month(), d.day())),
        ),
    ] {
        match instant {
            Some(instant) => out.push(Trial::time("date_time_neighbour", suffix, &text, &instant)),
            None => out.push(Trial::string("date_time_neighbour", suffix, &text)),
        }
    }
    for (suffix, text) in [
        ("offset:+24:00", format!("{date}T10:00:00+24:00")),
        ("offset:-24:00", format!("{date}T10:00:00-24:00")),
        ("offset:+23:60", format!("{date}T10:00:00+23:60")),
        ("leap_second:12:00:60Z", format!("{date}T12:00:60Z")),
        ("leap_second:23:58:60Z", format!("{date}T23:58:60Z")),
        (
            "leap_second:23:59:60+01:00",
            format!("{date}T23:59:60+01:00"),
        ),
    ] {
        out.push(Trial::string("date_time_neighbour", suffix, &text));
    }
}

/// A date-time whose fraction fills the member's `maxLength` exactly (valid when that is
/// 1 to 9 digits) and one digit past it (a reader that drops or keeps fraction digits
/// without counting the text admits it): `boundary_valid` and `string_edge`, the
/// reference deciding both. The instant moves by under a second.
pub(super) fn fraction_to_max_length(s: &str, max_length: Option<usize>, out: &mut Vec<Trial>) {
    let (Some(max), Ok(time)) = (max_length, s.parse::<Timestamp>()) else {
        return;
    };
    let whole = Timestamp::from_second(time.as_second()).unwrap_or(time);
    let Some(bare) = render(whole, 0, 0, true) else {
        return;
    };
    // `…SSZ` plus `.` and the digits: room for `max - bare - 1` digits.
    let Some(digits) = max
        .checked_sub(bare.len() + 1)
        .filter(|d| (1..=9).contains(d))
    else {
        return;
    };
    for (class, suffix, n) in [
        ("boundary_valid", "fraction_to_max_length", digits),
        ("string_edge", "fraction_one_past_max_length", digits + 1),
    ] {
        if let Some(text) = render(whole, 0, n.min(9), true) {
            // Ten digits are still RFC 3339: one past a 9-digit room appends one.
            let text = if n > 9 { text.replace('Z', "1Z") } else { text };
            out.push(Trial::time(class, suffix, &text, &text));
        }
    }
}

/// The calendar edges of [`calendar_trials`] as texts, `(suffix, text)`: for the classes
/// that write a time into a command's output (`lines-value`), where no `now` moves with it
/// (so the years 0001 and 9999 are written too).
pub(crate) fn calendar_texts(s: &str) -> Vec<(String, String)> {
    let mut trials = Vec::new();
    calendar_trials(s, false, &mut trials);
    trials
        .into_iter()
        .filter_map(|t| {
            let text = serde_json::from_str::<String>(&t.raw).ok()?;
            Some((t.suffix, text))
        })
        .collect()
}

/// The day `d` of month `m` of year `y`, counted on from the first of the month as a lax
/// parser would (April 31 is May 1, day 0 the last of the month before; month 13 the
/// January after, month 0 the December before); `None` outside the calendar's range.
fn rolled(y: i16, m: i8, d: i8) -> Option<airlock_guard::jiff::civil::Date> {
    use airlock_guard::jiff::{civil::Date, Span};
    let (y, m) = match m {
        0 => (y.checked_sub(1)?, 12),
        13 => (y.checked_add(1)?, 1),
        m => (y, m),
    };
    Date::new(y, m, 1)
        .ok()?
        .checked_add(Span::new().days(i64::from(d) - 1))
        .ok()
}

/// The calendar a hand-written time parser gets wrong (issue 22): valid times on Feb 29
/// of leap years (2024, and 2000, a century divisible by 400), on the first and the last
/// day of every month, at midnight and at the day's last second, in the years 0001 and
/// 9999; and their wrong neighbours: Feb 29 of the century year 2100, Feb 30, June 31,
/// September 31, day 00, month 00, one- and three-digit fields, other separators, the
/// basic ISO 8601 form, minute 60, offsets without a colon or of hours alone, `-00:00`,
/// and offsets that carry the UTC instant out of the years 0001–9999. The reference
/// decides each. A member under `fresh` gets `now` moved with the instant (see
/// [`Trial::instant`]); there the valid times in the years 0001 and 9999 are left out (no
/// `now` reaches 9999-12-31, and 0001 alone says nothing a fresh window can judge), and
/// the offset past 9999 keeps `now` (its instant has none).
pub(super) fn calendar_trials(s: &str, fresh: bool, out: &mut Vec<Trial>) {
    let Some(f) = calendar_fields(s) else {
        return;
    };
    valid_calendar_times(&f, fresh, out);
    let mut wrong = wrong_dates(s, &f);
    wrong.extend(wrong_times(s, &f));
    wrong.extend(one_digit_fields(s, &f));
    for (suffix, text, instant) in wrong {
        match instant {
            Some(instant) => out.push(Trial::time("date_time_neighbour", suffix, &text, &instant)),
            None => out.push(Trial::string("date_time_neighbour", suffix, &text)),
        }
    }
}

/// A date-time's fields as the calendar trials rewrite them.
struct CalendarFields<'s> {
    year: i16,
    month: i8,
    day: i8,
    hour: i8,
    /// `YYYY-MM-DD`.
    date: &'s str,
    /// `hh:mm:ss`.
    time: &'s str,
    /// From the `T` on.
    rest: &'s str,
    /// After the seconds: the fraction and the offset.
    tail: &'s str,
    minute: &'s str,
    second: &'s str,
}

/// A wrong neighbour: its id suffix, its text, and the instant a lax reader takes it for
/// (`None`: none).
type Wrong = (&'static str, String, Option<String>);

/// The fields of `s` when it is a valid RFC 3339 date-time in the usual shape
/// (`YYYY-MM-DDThh:mm:ss…`); `None` otherwise (no calendar trials).
fn calendar_fields(s: &str) -> Option<CalendarFields<'_>> {
    let b = s.as_bytes();
    let shaped = s.is_ascii() && b.len() >= 20 && b[10] == b'T' && b[13] == b':' && b[16] == b':';
    let (Some(year), Some(month), Some(day), Some(hour)) = (
        s.get(..4).and_then(|y| y.parse::<i16>().ok()),
        s.get(5..7).and_then(|m| m.parse::<i8>().ok()),
        s.get(8..10).and_then(|d| d.parse::<i8>().ok()),
        s.get(11..13).and_then(|h| h.parse::<i8>().ok()),
    ) else {
        return None;
    };
    if !shaped || s.parse::<Timestamp>().is_err() {
        return None;
    }
    Some(CalendarFields {
        year,
        month,
        day,
        hour,
        date: &s[..10],
        time: &s[11..19],
        rest: &s[10..],
        tail: &s[19..],
        minute: &s[14..16],
        second: &s[17..19],
    })
}

/// The valid times: leap days, the first and last day of every month of the year,
/// midnight and the last second, and (not under `fresh`) the years 0001 and 9999.
fn valid_calendar_times(f: &CalendarFields<'_>, fresh: bool, out: &mut Vec<Trial>) {
    let (year, date, rest, tail) = (f.year, f.date, f.rest, f.tail);
    let valid = |out: &mut Vec<Trial>, suffix: String, text: String| {
        out.push(Trial::time("boundary_valid", suffix, &text, &text));
    };
    valid(
        out,
        "calendar:leap_day:2024".into(),
        format!("2024-02-29{rest}"),
    );
    valid(
        out,
        "calendar:leap_day:2000".into(),
        format!("2000-02-29{rest}"),
    );
    for m in 1..=12i8 {
        let Ok(first) = airlock_guard::jiff::civil::Date::new(year, m, 1) else {
            continue;
        };
        valid(
            out,
            format!("calendar:first_day:{m:02}"),
            format!("{first}{rest}"),
        );
        let last = first.last_of_month();
        valid(
            out,
            format!("calendar:last_day:{m:02}"),
            format!("{last}{rest}"),
        );
    }
    valid(
        out,
        "calendar:midnight".into(),
        format!("{date}T00:00:00{tail}"),
    );
    valid(
        out,
        "calendar:last_second".into(),
        format!("{date}T23:59:59{tail}"),
    );
    if !fresh {
        valid(
            out,
            "calendar:year_0001".into(),
            "0001-01-01T00:00:00Z".into(),
        );
        valid(
            out,
            "calendar:year_9999".into(),
            "9999-12-31T23:59:59Z".into(),
        );
    }
}

/// Wrong dates: Feb 29 of 2100, Feb 30, June 31, September 31, day and month 00,
/// three-digit fields, slashes (a lax reader rolls the day over or reads the original).
fn wrong_dates(s: &str, f: &CalendarFields<'_>) -> Vec<Wrong> {
    let (year, month, day, rest) = (f.year, f.month, f.day, f.rest);
    let at = |d: Option<airlock_guard::jiff::civil::Date>| d.map(|d| format!("{d}{rest}"));
    vec![
        (
            "calendar:02-29:2100",
            format!("2100-02-29{rest}"),
            at(rolled(2100, 2, 29)),
        ),
        (
            "calendar:02-30",
            format!("{year:04}-02-30{rest}"),
            at(rolled(year, 2, 30)),
        ),
        (
            "calendar:06-31",
            format!("{year:04}-06-31{rest}"),
            at(rolled(year, 6, 31)),
        ),
        (
            "calendar:09-31",
            format!("{year:04}-09-31{rest}"),
            at(rolled(year, 9, 31)),
        ),
        (
            "calendar:day_00",
            format!("{year:04}-{month:02}-00{rest}"),
            at(rolled(year, month, 0)),
        ),
        (
            "calendar:month_00",
            format!("{year:04}-00-{day:02}{rest}"),
            at(rolled(year, 0, day)),
        ),
        (
            "calendar:three_digit_day",
            format!("{year:04}-{month:02}-0{day:02}{rest}"),
            Some(s.into()),
        ),
        (
            "calendar:three_digit_month",
            format!("{year:04}-0{month:02}-{day:02}{rest}"),
            Some(s.into()),
        ),
        (
            "calendar:slash_separators",
            format!("{year:04}/{month:02}/{day:02}{rest}"),
            Some(s.into()),
        ),
    ]
}

/// Wrong times: dots, the basic form, minute 60, offsets `-00:00`, without a colon, of
/// hours alone, and offsets that carry the instant out of the years 0001–9999.
fn wrong_times(s: &str, f: &CalendarFields<'_>) -> Vec<Wrong> {
    let (year, month, day, hour) = (f.year, f.month, f.day, f.hour);
    let (date, time, tail, minute, second) = (f.date, f.time, f.tail, f.minute, f.second);
    vec![
        (
            "calendar:dot_separators",
            format!("{date}T{hour:02}.{minute}.{second}{tail}"),
            Some(s.into()),
        ),
        (
            "calendar:basic_format",
            format!("{year:04}{month:02}{day:02}T{hour:02}{minute}{second}{tail}"),
            Some(s.into()),
        ),
        (
            "calendar:minute_60",
            format!("{date}T{hour:02}:60:{second}{tail}"),
            // A lax reader carries minute 60 into the next hour.
            (hour < 23).then(|| format!("{date}T{:02}:00:{second}{tail}", hour + 1)),
        ),
        (
            "calendar:offset_minus_zero",
            format!("{date}T{time}-00:00"),
            Some(format!("{date}T{time}Z")),
        ),
        (
            "calendar:offset_no_colon",
            format!("{date}T{time}+0100"),
            Some(format!("{date}T{time}+01:00")),
        ),
        (
            "calendar:offset_hours_only",
            format!("{date}T{time}+01"),
            Some(format!("{date}T{time}+01:00")),
        ),
        (
            "calendar:year_0000_by_offset",
            "0001-01-01T00:30:00+01:00".into(),
            Some("0001-01-01T00:30:00+01:00".into()),
        ),
        (
            "calendar:year_10000_by_offset",
            "9999-12-31T23:30:00-01:00".into(),
            None,
        ),
    ]
}

/// One-digit month, day and hour, where the field's value has one digit.
fn one_digit_fields(s: &str, f: &CalendarFields<'_>) -> Vec<Wrong> {
    let (year, month, day, hour) = (f.year, f.month, f.day, f.hour);
    let (date, tail, minute, second) = (f.date, f.tail, f.minute, f.second);
    let mut wrong = Vec::new();
    if month < 10 {
        wrong.push((
            "calendar:one_digit_month",
            format!("{year:04}-{month}-{day:02}{rest}", rest = f.rest),
            Some(s.into()),
        ));
    }
    if day < 10 {
        wrong.push((
            "calendar:one_digit_day",
            format!("{year:04}-{month:02}-{day}{rest}", rest = f.rest),
            Some(s.into()),
        ));
    }
    if hour < 10 {
        wrong.push((
            "calendar:one_digit_hour",
            format!("{date}T{hour}:{minute}:{second}{tail}"),
            Some(s.into()),
        ));
    }
    wrong
}

/// `request` with `now` moved by as much as the instant `instant` is from `original`, so
/// that the age of the member is the fixture's; unchanged when either does not parse or
/// the new `now` is out of range.
pub(super) fn following(
    request: &airlock_guard::Request,
    original: &str,
    instant: &str,
) -> airlock_guard::Request {
    let mut moved = request.clone();
    let shift = original
        .parse::<Timestamp>()
        .ok()
        .zip(instant.parse::<Timestamp>().ok())
        .map(|(from, to)| to.duration_since(from));
    if let Some(now) = shift.and_then(|d| request.now.checked_add(d).ok()) {
        moved.now = now;
    }
    moved
}

/// The freshness edges below a second: the request time one nanosecond, microsecond and
/// millisecond past each limit, and the field written with seven fraction digits just
/// past the skew (an adapter that truncates to seconds or microseconds admits it).
pub(crate) fn sub_second_edges(
    time: Timestamp,
    max_age: SignedDuration,
    max_skew: SignedDuration,
) -> Vec<(&'static str, Option<Timestamp>, Option<String>, Expectation)> {
    let ns = SignedDuration::from_nanos(1);
    let us = SignedDuration::from_micros(1);
    let ms = SignedDuration::from_millis(1);
    let mut out = vec![
        (
            "just_stale_1ns",
            time.checked_add(max_age + ns).ok(),
            None,
            Expectation::Reject,
        ),
        (
            "just_stale_1us",
            time.checked_add(max_age + us).ok(),
            None,
            Expectation::Reject,
        ),
        (
            "just_stale_1ms",
            time.checked_add(max_age + ms).ok(),
            None,
            Expectation::Reject,
        ),
        (
            "just_future_1ns",
            time.checked_sub(max_skew + ns).ok(),
            None,
            Expectation::Reject,
        ),
        (
            "just_future_1us",
            time.checked_sub(max_skew + us).ok(),
            None,
            Expectation::Reject,
        ),
        (
            "just_future_1ms",
            time.checked_sub(max_skew + ms).ok(),
            None,
            Expectation::Reject,
        ),
    ];
    // The field 100 ns past `now + max_skew`, written with 7 digits.
    let whole = Timestamp::from_second(time.as_second()).unwrap_or(time);
    if let (Ok(field), Ok(now)) = (
        whole.checked_add(SignedDuration::from_nanos(100)),
        whole.checked_sub(max_skew),
    ) {
        out.push((
            "field_future_by_100ns",
            Some(now),
            render(field, 0, 7, false),
            Expectation::Reject,
        ));
        out.push((
            "field_at_skew_7_digits",
            Some(now),
            render(whole, 0, 7, false),
            Expectation::Reference,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_keep_their_instant_across_offsets_and_fraction_digits() {
        let time: Timestamp = "2026-12-02T09:58:00.5Z".parse().unwrap();
        for offset in OFFSETS {
            let text = render(time, offset, 1, false).unwrap();
            assert_eq!(text.parse::<Timestamp>().unwrap(), time, "{text}");
        }
        assert_eq!(render(time, 0, 0, true).unwrap(), "2026-12-02T09:58:00Z");
        assert_eq!(
            render(time, 0, 4, true).unwrap(),
            "2026-12-02T09:58:00.5234Z"
        );
        assert_eq!(
            render(time, 0, 4, false).unwrap(),
            "2026-12-02T09:58:00.5000Z"
        );
        assert_eq!(
            render(time, -(23 * 60 + 59), 1, false).unwrap(),
            "2026-12-01T09:59:00.5-23:59"
        );
    }
}
