"""The SDK's side of the component: the host's imports and the export
componentize-py generates from ``wit/generator.wit`` (package
``wit_world``, made when the component is built), adapted to the SDK's
values. Nothing here is written by hand against the WIT's layout that the
bindings do not give."""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import generator_api as api
from wit_world.imports import log as wit_log
from wit_world.imports import model as wit_model
from wit_world.imports import templates as wit_templates
from wit_world.imports import types as wit_types

import seams_sdk as sdk

_ERRORS = {
    "invalid-input": wit_types.Error_InvalidInput,
    "query": wit_types.Error_Query,
    "template": wit_types.Error_Template,
    "failed": wit_types.Error_Failed,
}


def _message(error: Any) -> str:
    """The text of a host error (a WIT ``error`` case)."""
    value = getattr(error, "value", error)
    return str(getattr(value, "value", value))


class Host:
    """The host's imports, as the SDK calls them."""

    def query(self, sparql: str) -> str:
        try:
            return wit_model.query(sparql)
        except Err as e:
            raise sdk.QueryError(_message(e)) from None

    def hash(self) -> str:
        return wit_model.hash()

    def labels(self) -> list[tuple[str, str]]:
        return [(label.iri, label.label) for label in wit_model.labels()]

    def render(self, template: str, context: str) -> Any:
        try:
            return wit_templates.render(template, context)
        except Err as e:
            raise sdk.TemplateError(_message(e)) from None

    def log(self, level: str, message: str) -> None:
        wit_log.write(wit_log.Level.WARN if level == "warn" else wit_log.Level.INFO, message)


def _failure(e: BaseException) -> Err:
    """An exception as the protocol's error: an SDK error keeps its kind,
    anything else is ``failed`` naming its type, its traceback printed to
    stderr (which seams shows with the failure)."""
    if isinstance(e, sdk.Error):
        return Err(_ERRORS[e.kind](str(e)))
    traceback.print_exception(e, file=sys.stderr)
    return Err(wit_types.Error_Failed(f"{type(e).__name__}: {e}"))


def _meta(meta: sdk.Meta) -> api.Metadata:
    syntax = {"jinja": api.Syntax.JINJA, "brackets": api.Syntax.BRACKETS}.get(meta.syntax)
    if syntax is None:
        # meta cannot fail in the protocol: the host refuses the name.
        syntax = api.Syntax.JINJA
    return api.Metadata(
        name=meta.name,
        version=meta.version,
        description=meta.description,
        templates=[api.Template(name=t.name, source=t.source) for t in meta.templates],
        syntax=syntax,
        vocabularies=[
            api.Vocabulary(namespace=v.namespace, terms=v.terms, shapes=v.shapes)
            for v in meta.vocabularies
        ],
    )


def _file(file: sdk.File) -> wit_templates.File:
    if isinstance(file.body, sdk.Rendered):
        body: Any = wit_templates.Body_Rendered(file.body._handle)
    elif isinstance(file.body, str):
        body = wit_templates.Body_Text(file.body)
    else:
        raise sdk.Error(f"{file.path}: a file's body is rendered text or a str, not {type(file.body).__name__}")
    return wit_templates.File(path=file.path, body=body)


def generator_api(generator: sdk.Generator) -> type:
    """The ``GeneratorApi`` class componentize-py exports, calling ``generator``."""

    class GeneratorApi(exports.GeneratorApi):
        def meta(self) -> api.Metadata:
            try:
                return _meta(generator.meta())
            except Exception as e:
                # meta cannot fail in the protocol: the trap is the failure.
                traceback.print_exception(e, file=sys.stderr)
                raise

        def extract(self) -> str:
            try:
                return sdk._json(generator.extract(sdk.Model(sdk._host())))
            except Exception as e:
                raise _failure(e) from None

        def render(self, view: str) -> list[wit_templates.File]:
            try:
                return [_file(f) for f in generator.render(json.loads(view))]
            except Exception as e:
                raise _failure(e) from None

        def trace(self, view: str) -> list[api.FileTrace]:
            try:
                return [
                    api.FileTrace(
                        path=t.path,
                        lines=[
                            api.TraceLine(line=l.line, templates=list(l.templates), terms=list(l.terms))
                            for l in t.lines
                        ],
                    )
                    for t in generator.trace(json.loads(view))
                ]
            except Exception as e:
                raise _failure(e) from None

        def sources(self, view: str) -> list[api.FileSources]:
            try:
                return [
                    api.FileSources(path=s.path, iris=list(s.iris))
                    for s in generator.sources(json.loads(view))
                ]
            except Exception as e:
                raise _failure(e) from None

    return GeneratorApi
