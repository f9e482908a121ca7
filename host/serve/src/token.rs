//! The per-run token. `seams serve` prints it in the URL it opens; every
//! link of the viewer's pages carries it in its query and every write in
//! its form. Another user or process of the machine that can reach the
//! port but did not see the URL can read nothing it could not already,
//! and write nothing. It is never put in a cookie: cookies are scoped by
//! host, not port, so every other server on 127.0.0.1 (another user's, or
//! the generated app run from `out/`) would receive it; and the pages'
//! `Referrer-Policy: same-origin` keeps the address out of requests to
//! any other origin, another port included.

/// A secret of one run of the viewer.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// 128 random bits, as hex.
    ///
    /// # Errors
    ///
    /// The operating system gives no randomness.
    pub fn random() -> Result<Token, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The token's text, for the URL and the forms.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is this token, in time that does not depend on
    /// where they first differ.
    pub fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_and_match_only_themselves() {
        let a = Token::random().unwrap();
        let b = Token::random().unwrap();
        assert_eq!(a.as_str().len(), 32);
        assert_ne!(a.as_str(), b.as_str());
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(b.as_str()));
        assert!(!a.matches(""));
        assert!(!a.matches(&a.as_str()[1..]));
    }
}
