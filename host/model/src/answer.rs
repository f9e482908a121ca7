//! The text of a SELECT answer (the SPARQL 1.1 Query Results JSON Format),
//! written straight into a buffer: byte for byte what oxigraph's results
//! serializer writes, without its cost. That one writes each character of
//! a string with a call of its own, and lists each solution's events in a
//! vector first: on the generator's thread, a tenth of a query's time.

use std::io::Write;

use oxigraph::model::{TermRef, vocab::xsd};
use oxigraph::sparql::{QuerySolution, Variable};

/// A SELECT answer being written.
pub(crate) struct Answer {
    out: BoundedWriter,
    solutions: usize,
}

/// The answer passed its limit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLarge;

impl Answer {
    /// The head of an answer binding `variables`, at most `limit` bytes
    /// long once finished.
    ///
    /// # Errors
    ///
    /// The head alone passes the limit.
    pub(crate) fn start(variables: &[Variable], limit: usize) -> Result<Answer, TooLarge> {
        let mut answer = Answer {
            out: BoundedWriter::new(limit),
            solutions: 0,
        };
        answer.put(br#"{"head":{"vars":["#)?;
        for (i, variable) in variables.iter().enumerate() {
            if i > 0 {
                answer.put(b",")?;
            }
            answer.string(variable.as_str())?;
        }
        answer.put(br#"]},"results":{"bindings":["#)?;
        Ok(answer)
    }

    /// Adds `solution`: its bound variables, in order.
    ///
    /// # Errors
    ///
    /// The answer would pass its limit with it.
    pub(crate) fn push(&mut self, solution: &QuerySolution) -> Result<(), TooLarge> {
        if self.solutions > 0 {
            self.put(b",")?;
        }
        self.solutions += 1;
        self.put(b"{")?;
        for (i, (variable, term)) in solution.iter().enumerate() {
            if i > 0 {
                self.put(b",")?;
            }
            self.string(variable.as_str())?;
            self.put(b":")?;
            self.term(term.as_ref())?;
        }
        self.put(b"}")
    }

    /// The whole answer's text.
    ///
    /// # Errors
    ///
    /// The answer would pass its limit.
    pub(crate) fn finish(mut self) -> Result<String, TooLarge> {
        self.put(b"]}}")?;
        // Only `str`s and ASCII were written.
        Ok(String::from_utf8(self.out.buf).unwrap_or_default())
    }

    fn term(&mut self, term: TermRef<'_>) -> Result<(), TooLarge> {
        let (kind, value) = match term {
            TermRef::NamedNode(node) => ("uri", node.as_str()),
            TermRef::BlankNode(node) => ("bnode", node.as_str()),
            TermRef::Literal(literal) => ("literal", literal.value()),
        };
        self.put(br#"{"type":""#)?;
        self.put(kind.as_bytes())?;
        self.put(br#"","value":"#)?;
        self.string(value)?;
        if let TermRef::Literal(literal) = term {
            if let Some(language) = literal.language() {
                self.put(br#","xml:lang":"#)?;
                self.string(language)?;
            } else if literal.datatype() != xsd::STRING {
                self.put(br#","datatype":"#)?;
                self.string(literal.datatype().as_str())?;
            }
        }
        self.put(b"}")
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), TooLarge> {
        self.out.write_all(bytes).map_err(|_| TooLarge)
    }

    /// `text` as a JSON string: escaped as oxigraph escapes it (quotes,
    /// backslashes and control characters), unescaped runs copied whole,
    /// the limit checked as it is written (escaping a control character
    /// makes it six bytes).
    fn string(&mut self, text: &str) -> Result<(), TooLarge> {
        serde_json::to_writer(&mut self.out, text).map_err(|_| TooLarge)
    }
}

/// A `Vec` writer that fails once it would pass its limit: what the host
/// writes for a generator's query is bounded as it is written.
pub(crate) struct BoundedWriter {
    /// What was written.
    pub(crate) buf: Vec<u8>,
    limit: usize,
    /// Whether a write was refused for the limit.
    pub(crate) overflowed: bool,
}

impl BoundedWriter {
    pub(crate) fn new(limit: usize) -> Self {
        BoundedWriter {
            buf: Vec::new(),
            limit,
            overflowed: false,
        }
    }
}

impl Write for BoundedWriter {
    #[inline]
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.write_all(data).map(|()| data.len())
    }

    // Oxigraph's writers write a piece at a time, some a character at a
    // time: the default `write_all`, a loop over `write` that was not
    // inlined, was a tenth of a query's time.
    #[inline]
    fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        if self.buf.len() + data.len() > self.limit {
            self.overflowed = true;
            return Err(std::io::Error::other("answer too large"));
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxigraph::sparql::results::{QueryResultsFormat, QueryResultsSerializer};
    use oxigraph::sparql::{QueryResults, QuerySolutionIter, SparqlEvaluator};
    use oxigraph::store::Store;

    fn store(turtle: &str) -> Store {
        let store = Store::new().unwrap();
        store
            .load_from_slice(oxigraph::io::RdfFormat::Turtle, turtle)
            .unwrap();
        store
    }

    fn select(store: &Store, query: &str) -> QuerySolutionIter<'static> {
        let QueryResults::Solutions(solutions) = SparqlEvaluator::new()
            .parse_query(query)
            .unwrap()
            .on_store(store)
            .execute()
            .unwrap()
        else {
            panic!("a SELECT query")
        };
        solutions
    }

    /// Our answer to `query`, at most `limit` bytes long.
    fn ours(store: &Store, query: &str, limit: usize) -> Result<String, TooLarge> {
        let solutions = select(store, query);
        let mut answer = Answer::start(solutions.variables(), limit)?;
        for solution in solutions {
            answer.push(&solution.unwrap())?;
        }
        answer.finish()
    }

    /// The answers to `query` over `turtle`: oxigraph's text, then ours.
    fn both(turtle: &str, query: &str) -> (String, String) {
        let store = store(turtle);
        let solutions = select(&store, query);
        let mut writer = QueryResultsSerializer::from_format(QueryResultsFormat::Json)
            .serialize_solutions_to_writer(Vec::new(), solutions.variables().to_vec())
            .unwrap();
        for solution in solutions {
            writer.serialize(&solution.unwrap()).unwrap();
        }
        let theirs = String::from_utf8(writer.finish().unwrap()).unwrap();
        (theirs, ours(&store, query, usize::MAX).unwrap())
    }

    const TERMS: &str = r#"
        @prefix ex: <http://example.com/> .
        @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
        ex:a ex:plain "plain" ;
            ex:lang "say \"hi\"\n\té"@en-GB ;
            ex:typed "12.50"^^xsd:decimal ;
            ex:string "s"^^xsd:string ;
            ex:controls "\u0000\u0001\b\f\r\u001f\u007f / \\ end" ;
            ex:unicode "日本語 😀 \u2028" ;
            ex:blank [ ex:plain "inner" ] ;
            ex:iri <http://example.com/a?b=c&d=\u00e9#é> .
        ex:b ex:plain "" .
    "#;

    #[test]
    fn answers_are_written_byte_for_byte_as_oxigraph_writes_them() {
        for query in [
            "SELECT * WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o",
            "SELECT ?o ?s WHERE { ?s ?p ?o } ORDER BY ?o",
            // Unbound variables are left out of a solution; some have none.
            "SELECT ?s ?x ?o WHERE { ?s <http://example.com/plain> ?o \
             OPTIONAL { ?s <http://example.com/nothing> ?x } } ORDER BY ?o",
            "SELECT ?x WHERE { OPTIONAL { ?s <http://example.com/nothing> ?x } }",
            "SELECT * WHERE { ?s <http://example.com/none> ?o }",
            "SELECT (COUNT(*) AS ?n) (1.5 AS ?d) (true AS ?b) (STRLANG(\"x\", \"fr\") AS ?l) \
             WHERE { ?s ?p ?o }",
            "SELECT * WHERE { } ",
        ] {
            let (theirs, ours) = both(TERMS, query);
            assert_eq!(ours, theirs, "{query}");
            serde_json::from_str::<serde_json::Value>(&ours).unwrap();
        }
    }

    #[test]
    fn an_answer_is_refused_once_it_passes_its_limit() {
        let query = "SELECT * WHERE { ?s ?p ?o }";
        let store = store(TERMS);
        let whole = ours(&store, query, usize::MAX).unwrap();
        assert_eq!(ours(&store, query, whole.len()).unwrap(), whole);
        assert_eq!(ours(&store, query, whole.len() - 1), Err(TooLarge));
        assert_eq!(ours(&store, query, 10), Err(TooLarge));
    }

    #[test]
    fn a_string_is_held_to_the_limit_as_it_is_escaped() {
        // 1,000 control characters: 1,000 bytes in the model, 6,000 in
        // the answer.
        let controls = "\\u0001".repeat(1000);
        let store = store(&format!("<urn:a> <urn:b> \"{controls}\" ."));
        let query = "SELECT ?o WHERE { ?s ?p ?o }";
        let whole = ours(&store, query, usize::MAX).unwrap();
        assert!(whole.len() > 6000, "{}", whole.len());
        assert_eq!(ours(&store, query, 2000), Err(TooLarge));
        // Refused as it is written, not once written whole.
        let mut answer = Answer {
            out: BoundedWriter::new(2000),
            solutions: 0,
        };
        assert_eq!(answer.string(&"\u{1}".repeat(1000)), Err(TooLarge));
        assert!(answer.out.buf.len() <= 2000, "{}", answer.out.buf.len());
        assert!(answer.out.overflowed);
    }
}
