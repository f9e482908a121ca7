"""The SDK's values, run on CPython with a fake host (the component's
host is the protocol's imports; tests/e2e/python.rs runs the component)."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import seams_sdk as seams  # noqa: E402


def answer(*rows):
    return json.dumps({"head": {"vars": []}, "results": {"bindings": list(rows)}})


class FakeHost:
    def __init__(self, answer):
        self.answer = answer
        self.rendered = []

    def query(self, sparql):
        return self.answer

    def render(self, template, context):
        self.rendered.append((template, context))
        return template


class Rows(unittest.TestCase):
    def test_terms_keep_their_kind_datatype_and_language(self):
        rows = seams.rows_of(answer({
            "a": {"type": "uri", "value": "urn:a"},
            "s": {"type": "literal", "value": "x", "datatype": seams.XSD_STRING},
            "n": {"type": "literal", "value": "3", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
            "l": {"type": "literal", "value": "chat", "xml:lang": "en"},
            "b": {"type": "bnode", "value": "b0"},
        }))
        row = rows[0]
        self.assertEqual(row["a"], seams.Term("iri", "urn:a"))
        self.assertEqual(row["s"], seams.Term("literal", "x"))
        self.assertEqual(row["n"].datatype, "http://www.w3.org/2001/XMLSchema#integer")
        self.assertEqual(row["l"].language, "en")
        self.assertEqual(row["b"].kind, "blank")
        self.assertEqual(list(row), ["a", "b", "l", "n", "s"])

    def test_an_unbound_or_wrong_variable_names_itself(self):
        row = seams.rows_of(answer({"s": {"type": "literal", "value": "x"}}))[0]
        self.assertIsNone(row.value("missing"))
        with self.assertRaisesRegex(seams.QueryError, r"\?missing is unbound"):
            row.require("missing")
        with self.assertRaisesRegex(seams.QueryError, r"\?s is bound to a literal, not an IRI"):
            row.iri("s")

    def test_an_answer_that_is_not_a_select_is_a_query_error(self):
        with self.assertRaises(seams.QueryError):
            seams.rows_of('{"boolean": true}')
        with self.assertRaises(seams.QueryError):
            seams.rows_of("not json")


class Views(unittest.TestCase):
    def test_a_view_object_sorts_its_origins_once_each_and_keeps_iri_its_own(self):
        view = seams.traced("urn:a", ["urn:c", "urn:b", "urn:c"], label="A")
        self.assertEqual(view, {"label": "A", "iri": "urn:a", "origins": ["urn:b", "urn:c"]})
        self.assertNotIn("origins", seams.traced("urn:a"))
        with self.assertRaises(seams.InvalidInput):
            seams.traced("")

    def test_origins_by_name_are_kept_and_a_field_named_iri_is_refused(self):
        # The call JavaScript's traced(iri, {origins, label}) reads like.
        view = seams.traced("urn:a", origins=["urn:c", "urn:b"], label="A")
        self.assertEqual(view, {"label": "A", "iri": "urn:a", "origins": ["urn:b", "urn:c"]})
        both = seams.traced("urn:a", ["urn:d"], origins=["urn:b"])
        self.assertEqual(both["origins"], ["urn:b", "urn:d"])
        for wrong in [lambda: seams.traced("urn:a", iri="urn:b"),
                      lambda: seams.traced("urn:a", origins="urn:b")]:
            with self.assertRaises(seams.InvalidInput):
                wrong()

    def test_render_sends_the_context_as_compact_json(self):
        host = FakeHost(answer())
        seams.use_host(host)
        seams.render("t.html", {"x": "é", "n": [1, 2]})
        self.assertEqual(host.rendered, [("t.html", '{"x":"é","n":[1,2]}')])
        with self.assertRaises(seams.TemplateError):
            seams.render("t.html", ["not", "a", "mapping"])
        with self.assertRaises(seams.InvalidInput):
            seams.render("t.html", {"x": float("nan")})

    def test_a_model_selects_through_its_host(self):
        model = seams.Model(FakeHost(answer({"a": {"type": "uri", "value": "urn:a"}})))
        self.assertEqual(model.select("SELECT ?a WHERE {}")[0].iri("a"), "urn:a")


if __name__ == "__main__":
    unittest.main()
