"""Write seams generators in Python.

A generator reads the project's RDF model through SPARQL, builds a *view
model* (JSON-like values), and renders its own templates through the
host's template service. The host runs it as a sandboxed WebAssembly
component made by componentize-py; this package hides the component
bindings behind one class to subclass, :class:`Generator`, and one call,
:func:`export`::

    import seams_sdk as seams

    class Things(seams.Generator):
        def meta(self):
            return seams.Meta("things", "0.1.0", "A page listing every labelled thing",
                              templates=[seams.Template.file("templates/things.html")],
                              syntax="brackets")

        def extract(self, model):
            rows = model.select("SELECT ?thing ?label WHERE { ?thing rdfs:label ?label } ORDER BY ?thing")
            return {"things": [seams.traced(r.iri("thing"), label=r.require("label")) for r in rows]}

        def render(self, view):
            return [seams.File.rendered("things.html", seams.render("things.html", view))]

    GeneratorApi = seams.export(Things())

View objects (:func:`traced`) carry the model IRIs a value came from: the
host traces every line that prints a value read off one to its ``iri`` and
``origins``, as for Rust generators.
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

__version__ = "0.1.0"
#: The protocol version this SDK builds against (``wit/generator.wit``).
PROTOCOL = "0.2.0"

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"

__all__ = [
    "Error", "InvalidInput", "QueryError", "TemplateError",
    "Term", "Row", "Model", "traced",
    "Template", "Vocabulary", "Meta",
    "Rendered", "render", "File", "TraceLine", "FileTrace", "FileSources",
    "Generator", "export", "log",
]


class Error(Exception):
    """A generator's failure, reported to the host with its message."""

    #: The protocol's error case this maps to.
    kind = "failed"


class InvalidInput(Error):
    """The model does not hold what the generator needs."""

    kind = "invalid-input"


class QueryError(Error):
    """A query failed, or its answer is not what was asked for."""

    kind = "query"


class TemplateError(Error):
    """The host could not render a template."""

    kind = "template"


@dataclass(frozen=True)
class Term:
    """One bound value of a query row."""

    #: ``"iri"``, ``"literal"``, ``"blank"`` or ``"triple"``.
    kind: str
    #: The IRI, the literal's lexical form, or the blank node's label.
    value: str
    #: A literal's datatype IRI, when it is not ``xsd:string``.
    datatype: str | None = None
    #: A literal's language tag.
    language: str | None = None


class Row(Mapping[str, Term]):
    """One row of a SELECT answer: variable name (without ``?``) to term.
    Unbound variables are absent."""

    def __init__(self, terms: Mapping[str, Term]):
        self._terms = dict(sorted(terms.items()))

    def __getitem__(self, var: str) -> Term:
        return self._terms[var]

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __len__(self) -> int:
        return len(self._terms)

    def __repr__(self) -> str:
        return f"Row({self._terms!r})"

    def value(self, var: str) -> str | None:
        """The value (IRI or lexical form) bound to ``var``, if any."""
        term = self._terms.get(var)
        return None if term is None else term.value

    def require(self, var: str) -> str:
        """The value bound to ``var``; :class:`QueryError` naming it when unbound."""
        value = self.value(var)
        if value is None:
            raise QueryError(f"variable ?{var} is unbound")
        return value

    def iri(self, var: str) -> str:
        """The IRI bound to ``var``; :class:`QueryError` when it is unbound or not an IRI."""
        term = self._terms.get(var)
        if term is None:
            raise QueryError(f"variable ?{var} is unbound")
        if term.kind != "iri":
            raise QueryError(f"variable ?{var} is bound to a {term.kind}, not an IRI: {term.value!r}")
        return term.value


def _term(node: Mapping[str, Any]) -> Term:
    kind = node.get("type")
    if kind == "uri":
        return Term("iri", node["value"])
    if kind == "literal":
        datatype = node.get("datatype")
        return Term("literal", node["value"], None if datatype == XSD_STRING else datatype,
                    node.get("xml:lang"))
    if kind == "bnode":
        return Term("blank", node["value"])
    if kind == "triple":
        parts = node["value"]
        text = " ".join(_ntriples(_term(parts[k])) for k in ("subject", "predicate", "object"))
        return Term("triple", f"<< {text} >>")
    raise QueryError(f"the host answered with a term of unknown type {kind!r}")


def _ntriples(term: Term) -> str:
    if term.kind == "iri":
        return f"<{term.value}>"
    if term.kind == "blank":
        return f"_:{term.value}"
    if term.kind == "triple":
        return term.value
    text = json.dumps(term.value, ensure_ascii=False)
    if term.language:
        return f"{text}@{term.language}"
    return f"{text}^^<{term.datatype}>" if term.datatype else text


def rows_of(answer: str) -> list[Row]:
    """The rows of a SPARQL 1.1 JSON results answer."""
    try:
        bindings = json.loads(answer)["results"]["bindings"]
    except (ValueError, KeyError, TypeError) as e:
        raise QueryError(f"not a SELECT answer: {e}") from None
    return [Row({var: _term(node) for var, node in row.items()}) for row in bindings]


class Model:
    """Read-only access to the project's model, through the host. Every
    query has the model's own prefixes declared (and ``rdf:``, ``rdfs:``,
    ``xsd:``)."""

    def __init__(self, host: Any):
        self._host = host

    def query(self, sparql: str) -> str:
        """The host's raw answer: SPARQL 1.1 JSON results for SELECT and
        ASK, N-Triples for CONSTRUCT."""
        return self._host.query(sparql)

    def select(self, sparql: str) -> list[Row]:
        """Runs a SELECT query; its rows, in the order the query gives."""
        return rows_of(self.query(sparql))

    def ask(self, sparql: str) -> bool:
        """Runs an ASK query."""
        answer = json.loads(self.query(sparql))
        if not isinstance(answer.get("boolean"), bool):
            raise QueryError("not an ASK query")
        return answer["boolean"]

    def hash(self) -> str:
        """The model hash (sha256 of the canonical N-Quads, lowercase hex)."""
        return self._host.hash()

    def labels(self) -> list[tuple[str, str]]:
        """Every labelled subject as ``(iri, label)``, sorted by IRI."""
        return self._host.labels()


def traced(iri: str, origins: Iterable[str] = (), /, **fields: Any) -> dict[str, Any]:
    """A *view object* for the model element ``iri``: ``fields`` beside a
    string ``iri`` and, when any, the sorted ``origins`` (further elements
    its extraction read), given second or by name
    (``traced(iri, origins=[...], label=...)``, as in JavaScript's
    ``traced(iri, {origins: [...], label})``). Lines printing a value read
    off it are traced to them. A field named ``iri`` is refused: the view
    object's IRI is the first argument."""
    if not isinstance(iri, str) or not iri:
        raise InvalidInput(f"a view object's iri must be a non-empty string, not {iri!r}")
    if "iri" in fields:
        raise InvalidInput(
            "a view object's fields may not be named 'iri': its IRI is traced()'s first argument"
        )
    named = fields.pop("origins", ())
    if isinstance(named, str) or isinstance(origins, str):
        raise InvalidInput("a view object's origins are a list of IRIs, not one string")
    view = dict(fields)
    view["iri"] = iri
    kept = sorted(set(origins) | set(named))
    if kept:
        view["origins"] = kept
    return view


@dataclass(frozen=True)
class Template:
    """One of the generator's templates, shipped in its ``meta``."""

    name: str
    source: str

    @staticmethod
    def file(path: str, name: str | None = None) -> "Template":
        """The template in ``path``, relative to the calling module's
        directory, named ``name`` (its file name by default). Read when the
        module is imported: componentize-py imports it while it builds the
        component, so the text is in the component and the generator reads
        no file when it runs."""
        frame = inspect.currentframe()
        caller = frame.f_back.f_code.co_filename if frame and frame.f_back else "."
        full = os.path.join(os.path.dirname(os.path.abspath(caller)), path)
        with open(full, encoding="utf-8") as f:
            return Template(name or os.path.basename(path), f.read())


@dataclass(frozen=True)
class Vocabulary:
    """A vocabulary the generator reads: the model is checked against its
    terms (Turtle) and shapes (SHACL, Turtle) before the generator runs."""

    namespace: str
    terms: str
    shapes: str | None = None


@dataclass(frozen=True)
class Meta:
    """Who the generator is and the templates it ships."""

    name: str
    version: str
    description: str
    templates: Sequence[Template] = ()
    #: ``"jinja"`` (``{{ }}``) or ``"brackets"`` (``[[ ]]``, ``[% %]``, ``[# #]``).
    syntax: str = "jinja"
    vocabularies: Sequence[Vocabulary] = ()


class Rendered:
    """Text the host rendered from one of the generator's templates; the
    host traces it. Return it in a :meth:`File.rendered`."""

    def __init__(self, handle: Any):
        self._handle = handle

    def text(self) -> str:
        """The rendered text."""
        return self._handle.text()


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"the view model is not JSON: {e}") from None


def render(template: str, context: Mapping[str, Any]) -> Rendered:
    """Renders the generator's ``template`` with ``context``, a mapping
    whose keys become the template's variables."""
    if not isinstance(context, Mapping):
        raise TemplateError(f"{template}: the context must be a mapping, not {type(context).__name__}")
    return Rendered(_host().render(template, _json(context)))


@dataclass(frozen=True)
class File:
    """One output file: text the host rendered, or plain text."""

    path: str
    body: Rendered | str

    @staticmethod
    def rendered(path: str, rendered: Rendered) -> "File":
        """A file whose text the host rendered (and traces)."""
        return File(path, rendered)

    @staticmethod
    def text(path: str, text: str) -> "File":
        """A file of plain text: give its trace or sources yourself."""
        return File(path, text)


@dataclass(frozen=True)
class TraceLine:
    """One line of a plain-text file's own trace."""

    line: int
    templates: Sequence[str]
    terms: Sequence[str]


@dataclass(frozen=True)
class FileTrace:
    """The trace of a plain-text file."""

    path: str
    lines: Sequence[TraceLine] = field(default_factory=tuple)


@dataclass(frozen=True)
class FileSources:
    """The model IRIs a file without a trace was made from."""

    path: str
    iris: Sequence[str] = field(default_factory=tuple)


class Generator:
    """A seams generator: subclass it, then ``GeneratorApi = export(Yours())``."""

    def meta(self) -> Meta:
        """Describes the generator. Called first; must not query the model."""
        raise NotImplementedError

    def extract(self, model: Model) -> Mapping[str, Any]:
        """Reads the model into the view model (a JSON-like mapping)."""
        raise NotImplementedError

    def render(self, view: Mapping[str, Any]) -> list[File]:
        """Turns the view model into files."""
        raise NotImplementedError

    def trace(self, view: Mapping[str, Any]) -> list[FileTrace]:
        """Traces of the plain-text files :meth:`render` returned."""
        return []

    def sources(self, view: Mapping[str, Any]) -> list[FileSources]:
        """Lock sources of files that have no trace."""
        return []


class _Log:
    """``seams.log``: lines for seams's output, at a level (the host keeps
    up to ``[sandbox] max-log-kib`` of them per generator)."""

    def info(self, message: str) -> None:
        """Writes an informational line to seams's output."""
        _host().log("info", message)

    def warn(self, message: str) -> None:
        """Writes a warning to seams's output."""
        _host().log("warn", message)


#: The generator's log: ``log.info(...)``, ``log.warn(...)``.
log = _Log()

_HOST: Any = None


def _host() -> Any:
    global _HOST
    if _HOST is None:
        from . import _component

        _HOST = _component.Host()
    return _HOST


def use_host(host: Any) -> None:
    """Sets the host the SDK calls (``query``, ``hash``, ``labels``,
    ``render``, ``log``): for running a generator outside a component, in
    tests. A component uses the host's imports."""
    global _HOST
    _HOST = host


def export(generator: Generator) -> type:
    """The class componentize-py exports for ``generator``: assign it to
    ``GeneratorApi`` in the module you build (``GeneratorApi =
    export(Yours())``), where componentize-py looks for it."""
    from . import _component

    return _component.generator_api(generator)
