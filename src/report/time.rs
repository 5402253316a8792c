//! The pause between two transcript timestamps (RFC 3339 in UTC, as both clients write
//! them), without a date-time dependency: only differences are needed.

/// Seconds from `a` to `b`, or `None` when either is not `YYYY-MM-DDTHH:MM:SS[.frac]Z` (or
/// with a numeric offset) or `b` is earlier.
pub(crate) fn seconds_between(a: &str, b: &str) -> Option<u64> {
    let (a, b) = (epoch_seconds(a)?, epoch_seconds(b)?);
    u64::try_from(b - a).ok()
}

fn epoch_seconds(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() < 19 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[13] != b':' {
        return None;
    }
    let field = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (field(0..4)?, field(5..7)?, field(8..10)?);
    let (hour, minute, second) = (field(11..13)?, field(14..16)?, field(17..19)?);
    // The offset after the optional fraction: Z, or +HH:MM / -HH:MM.
    let rest = text[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    let offset = match rest.as_bytes().first() {
        None | Some(b'Z') | Some(b'z') => 0,
        Some(sign @ (b'+' | b'-')) => {
            let hours = rest.get(1..3)?.parse::<i64>().ok()?;
            let minutes = rest.get(4..6)?.parse::<i64>().ok()?;
            let total = hours * 3600 + minutes * 60;
            if *sign == b'+' { total } else { -total }
        }
        Some(_) => return None,
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_across_days_fractions_and_offsets() {
        assert_eq!(epoch_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(epoch_seconds("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(
            seconds_between("2026-02-28T23:59:30.5Z", "2026-03-01T00:00:30.123Z"),
            Some(60)
        );
        assert_eq!(
            seconds_between("2026-01-01T10:00:00+02:00", "2026-01-01T08:05:00Z"),
            Some(300)
        );
        assert_eq!(
            seconds_between("2026-01-01T10:00:00Z", "2026-01-01T09:00:00Z"),
            None
        );
        assert_eq!(seconds_between("yesterday", "2026-01-01T09:00:00Z"), None);
    }
}
