//! The sentinels of the tracing render: two private-use characters around
//! a mark's number, printed after every template line and traced value,
//! and the names of the tracing calls that print them. Nothing here knows
//! templates or values: the instrumentation writes these names, the
//! recorder defines them, the walk reads the sentinels back.

/// Opens a sentinel in the tracing render; a private-use character, so it
/// does not occur in real text (and when it does, tracing says so).
pub(crate) const SENTINEL_OPEN: char = '\u{F8F0}';
/// Closes a sentinel.
pub(crate) const SENTINEL_CLOSE: char = '\u{F8F1}';

/// The prefix of every name the instrumentation adds. A template that
/// holds it is refused, so the tracing calls cannot be reached, tested or
/// shadowed from a template.
pub(crate) const RESERVED_PREFIX: &str = "__seams_";

/// Names of the filters the tracing environment defines (see [`tracing_call`]).
pub(crate) const LINE_FN: &str = "__seams_line";
pub(crate) const VALUE_FN: &str = "__seams_value";
/// As [`VALUE_FN`], for a value read off the innermost candidate for its
/// enclosing view object: the owner is that candidate, named once.
pub(crate) const OWNED_FN: &str = "__seams_owned";
pub(crate) const INCLUDE_FN: &str = "__seams_include";
/// Names of the tracing calls around a shared loop ([`crate::fragment`]):
/// whether its output is kept for this list, the kept output, keeping it,
/// and the variable that captures it.
pub(crate) const FRAGMENT_FN: &str = "__seams_fragment";
pub(crate) const REPLAY_FN: &str = "__seams_replay";
pub(crate) const KEEP_FN: &str = "__seams_keep";

/// The sentinel of mark `index`, the two sentinel characters around its
/// digits, made on the stack: one is printed for every line and value.
pub(crate) struct Sentinel {
    bytes: [u8; Sentinel::CAP],
    len: usize,
}

impl Sentinel {
    const CAP: usize = 2 * 3 + 20;

    pub(crate) fn new(index: usize) -> Sentinel {
        let mut bytes = [0u8; Sentinel::CAP];
        let mut len = SENTINEL_OPEN.encode_utf8(&mut bytes).len();
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = index;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        bytes[len..len + digits.len() - at].copy_from_slice(&digits[at..]);
        len += digits.len() - at;
        len += SENTINEL_CLOSE.encode_utf8(&mut bytes[len..]).len();
        Sentinel { bytes, len }
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("sentinel characters and digits")
    }
}

/// The bytes of the sentinels in a tracing render's text whose context
/// and templates hold none: counted in the text, not as they are printed,
/// since output a child template prints outside its blocks is dropped.
pub(crate) fn sentinel_bytes(traced: &str) -> usize {
    let mut open = [0u8; 4];
    let open = SENTINEL_OPEN.encode_utf8(&mut open).as_bytes();
    let bytes = traced.as_bytes();
    memchr::memmem::find_iter(bytes, open)
        .map(|at| open.len() + digits_at(bytes, at + open.len()) + SENTINEL_CLOSE.len_utf8())
        .sum()
}

/// How many ASCII digits start at `at`: a sentinel's mark number.
pub(crate) fn digits_at(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// Whether a context's JSON text may hold a sentinel character, as
/// itself or as a `\u` escape: a false alarm costs a second render.
pub(crate) fn may_hold_sentinel(context: &str) -> bool {
    let bytes = context.as_bytes();
    let mut open = [0u8; 4];
    let lead = &SENTINEL_OPEN.encode_utf8(&mut open).as_bytes()[..2];
    memchr::memchr2_iter(lead[0], b'\\', bytes).any(|at| {
        let rest = &bytes[at..];
        if rest[0] == b'\\' {
            rest.len() >= 6
                && rest[1] == b'u'
                && rest[2..5].eq_ignore_ascii_case(b"f8f")
                && matches!(rest[5], b'0' | b'1')
        } else {
            rest.starts_with(lead) && matches!(rest.get(2), Some(0xB0 | 0xB1))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentinel_is_its_characters_around_the_digits_and_short_ones_are_held_inline() {
        for (index, digits) in [(0, "0"), (7, "7"), (10, "10"), (123_456, "123456")] {
            let text = format!("{SENTINEL_OPEN}{digits}{SENTINEL_CLOSE}");
            assert_eq!(Sentinel::new(index).as_str(), text);
        }
        let max = Sentinel::new(usize::MAX);
        assert_eq!(
            max.as_str(),
            format!("{SENTINEL_OPEN}{}{SENTINEL_CLOSE}", usize::MAX)
        );
        // Up to 16 digits the text fits a value's inline string (22
        // bytes): a line's sentinel costs no allocation.
        assert_eq!(Sentinel::new(9_999_999_999_999_999).as_str().len(), 22);
    }
}
