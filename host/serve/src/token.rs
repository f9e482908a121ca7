//! The per-run token. `seams serve` prints it in the URL it opens; that
//! first request trades it for a same-site cookie, and every write must
//! carry it in its form. Another user or process of the machine that can
//! reach the port but did not see the URL can read nothing it could not
//! already, and write nothing.

/// The cookie that carries the token after the first visit.
pub const COOKIE: &str = "seams-viewer";

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

    /// Whether a `Cookie` header carries this token.
    pub fn in_cookies(&self, header: &str) -> bool {
        header
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == COOKIE && self.matches(value))
    }

    /// The `Set-Cookie` value that carries it: sent only to this origin,
    /// never with a request another site starts, unreadable to scripts.
    pub fn set_cookie(&self) -> String {
        format!("{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict", self.0)
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

    #[test]
    fn the_cookie_header_is_read_among_others() {
        let token = Token::random().unwrap();
        let mine = format!("theme=dark; {COOKIE}={}; x=1", token.as_str());
        assert!(token.in_cookies(&mine));
        assert!(!token.in_cookies("theme=dark"));
        assert!(!token.in_cookies(&format!("{COOKIE}=0123")));
        assert!(!token.in_cookies(&format!("other{COOKIE}={}", token.as_str())));
        assert!(token.set_cookie().contains("SameSite=Strict"));
    }
}
