// Write seams generators in JavaScript.
//
// A generator reads the project's RDF model through SPARQL, builds a view
// model (JSON values) and renders its own templates through the host's
// template service. seams runs it as a sandboxed WebAssembly component
// made by componentize-js; this module hides the component bindings behind
// one object to implement and one call, `serve`:
//
//     import * as seams from './seams-sdk/index.js';
//
//     export default {
//       meta: () => seams.meta('things', '0.1.0', 'A page listing every labelled thing', {
//         templates: [seams.templateFile('templates/things.html')],
//         syntax: 'brackets',
//       }),
//       extract(model) {
//         const rows = model.select('SELECT ?thing ?label WHERE { ?thing rdfs:label ?label } ORDER BY ?thing');
//         return { things: rows.map((r) => seams.traced(r.iri('thing'), { label: r.require('label') })) };
//       },
//       render: (view) => [seams.File.rendered('things.html', seams.render('things.html', view))],
//     };
//
// View objects (`traced`) carry the model IRIs a value came from: the host
// traces every line that prints a value read off one to its `iri` and
// `origins`, as for Rust and Python generators.
//
// This module imports nothing from the host: `component.js` connects it to
// the host's imports, so that it also runs under Node.js for tests
// (`useHost`).

/** This SDK's version. */
export const VERSION = '0.1.0';
/** The protocol version this SDK builds against (`wit/generator.wit`). */
export const PROTOCOL = '0.2.0';

const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';

/** A generator's failure, reported to the host with its message. */
export class GeneratorError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }

  /** The protocol's error case this maps to. */
  get kind() {
    return 'failed';
  }
}

/** The model does not hold what the generator needs. */
export class InvalidInput extends GeneratorError {
  get kind() {
    return 'invalid-input';
  }
}

/** A query failed, or its answer is not what was asked for. */
export class QueryError extends GeneratorError {
  get kind() {
    return 'query';
  }
}

/** The host could not render a template. */
export class TemplateError extends GeneratorError {
  get kind() {
    return 'template';
  }
}

/** One bound value of a query row. */
export class Term {
  constructor(kind, value, datatype = null, language = null) {
    /** `iri`, `literal`, `blank` or `triple`. */
    this.kind = kind;
    /** The IRI, the literal's lexical form, or the blank node's label. */
    this.value = value;
    /** A literal's datatype IRI, when it is not xsd:string. */
    this.datatype = datatype;
    /** A literal's language tag. */
    this.language = language;
    Object.freeze(this);
  }
}

/** One row of a SELECT answer: variable name (without `?`) to term. */
export class Row {
  constructor(terms) {
    this.terms = Object.freeze(
      Object.fromEntries(Object.entries(terms).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    );
    Object.freeze(this);
  }

  /** The bound variables, sorted. */
  vars() {
    return Object.keys(this.terms);
  }

  /** The term bound to `name`, or undefined. */
  get(name) {
    return Object.hasOwn(this.terms, name) ? this.terms[name] : undefined;
  }

  /** The value (IRI or lexical form) bound to `name`, or undefined. */
  value(name) {
    return this.get(name)?.value;
  }

  /** The value bound to `name`; a QueryError naming it when unbound. */
  require(name) {
    const value = this.value(name);
    if (value === undefined) {
      throw new QueryError(`variable ?${name} is unbound`);
    }
    return value;
  }

  /** The IRI bound to `name`; a QueryError when unbound or not an IRI. */
  iri(name) {
    const term = this.get(name);
    if (term === undefined) {
      throw new QueryError(`variable ?${name} is unbound`);
    }
    if (term.kind !== 'iri') {
      throw new QueryError(
        `variable ?${name} is bound to a ${term.kind}, not an IRI: ${JSON.stringify(term.value)}`,
      );
    }
    return term.value;
  }
}

function term(node) {
  const kind = node?.type;
  if (kind === 'uri') {
    return new Term('iri', node.value);
  }
  if (kind === 'literal') {
    const datatype = node.datatype ?? null;
    return new Term('literal', node.value, datatype === XSD_STRING ? null : datatype, node['xml:lang'] ?? null);
  }
  if (kind === 'bnode') {
    return new Term('blank', node.value);
  }
  if (kind === 'triple') {
    const parts = ['subject', 'predicate', 'object'].map((k) => ntriples(term(node.value[k])));
    return new Term('triple', `<< ${parts.join(' ')} >>`);
  }
  throw new QueryError(`the host answered with a term of unknown type ${JSON.stringify(kind)}`);
}

function ntriples(t) {
  if (t.kind === 'iri') {
    return `<${t.value}>`;
  }
  if (t.kind === 'blank') {
    return `_:${t.value}`;
  }
  if (t.kind === 'triple') {
    return t.value;
  }
  const text = JSON.stringify(t.value);
  if (t.language) {
    return `${text}@${t.language}`;
  }
  return t.datatype ? `${text}^^<${t.datatype}>` : text;
}

/** The rows of a SPARQL 1.1 JSON results answer. */
export function rowsOf(answer) {
  let bindings;
  try {
    bindings = JSON.parse(answer).results.bindings;
  } catch (e) {
    throw new QueryError(`not a SELECT answer: ${e.message}`);
  }
  if (!Array.isArray(bindings)) {
    throw new QueryError('not a SELECT answer: results.bindings is not a list');
  }
  return bindings.map(
    (row) => new Row(Object.fromEntries(Object.entries(row).map(([name, node]) => [name, term(node)]))),
  );
}

/**
 * Read-only access to the project's model, through the host. Every query
 * has the model's own prefixes declared (and rdf:, rdfs:, xsd:).
 */
export class Model {
  constructor(host) {
    this.host = host;
  }

  /** The host's raw answer: SPARQL 1.1 JSON results for SELECT and ASK, N-Triples for CONSTRUCT. */
  query(sparql) {
    return this.host.query(sparql);
  }

  /** Runs a SELECT query; its rows, in the order the query gives. */
  select(sparql) {
    return rowsOf(this.query(sparql));
  }

  /** Runs an ASK query. */
  ask(sparql) {
    let answer;
    try {
      answer = JSON.parse(this.query(sparql));
    } catch (e) {
      throw new QueryError(`not an ASK answer: ${e.message}`);
    }
    if (typeof answer?.boolean !== 'boolean') {
      throw new QueryError('not an ASK query');
    }
    return answer.boolean;
  }

  /** The model hash (sha256 of the canonical N-Quads, lowercase hex). */
  hash() {
    return this.host.hash();
  }

  /** Every labelled subject as `[iri, label]`, sorted by IRI. */
  labels() {
    return this.host.labels();
  }
}

/**
 * A view object for the model element `iri`: `fields` beside a string
 * `iri` and, when any, the sorted `origins` (further elements its
 * extraction read). Lines printing a value read off it are traced to them.
 */
export function traced(iri, fields = {}, origins = []) {
  if (typeof iri !== 'string' || iri === '') {
    throw new InvalidInput(`a view object's iri must be a non-empty string, not ${JSON.stringify(iri)}`);
  }
  if (Object.hasOwn(fields, 'iri')) {
    throw new InvalidInput("a view object's fields may not be named 'iri': its IRI is traced()'s first argument");
  }
  const named = Object.hasOwn(fields, 'origins') ? fields.origins : [];
  if (typeof named === 'string' || typeof origins === 'string') {
    throw new InvalidInput("a view object's origins are a list of IRIs, not one string");
  }
  const view = {};
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'origins') {
      view[key] = value;
    }
  }
  view.iri = iri;
  const kept = [...new Set([...origins, ...named])].sort();
  if (kept.length > 0) {
    view.origins = kept;
  }
  return view;
}

/** One of the generator's templates, shipped in its meta. */
export function template(name, source) {
  return Object.freeze({ name, source });
}

// The package's template files, by path relative to the package: the
// build registers them (`seams test-generator` bundles `templates/`) before
// the generator's module is evaluated.
const templateFiles = new Map();

/** Registers the package's template files (path -> text); the build calls it. */
export function registerTemplateFiles(files) {
  for (const [path, source] of Object.entries(files)) {
    templateFiles.set(path, source);
  }
}

/**
 * The template in `path`, relative to the package (`templates/page.html`),
 * named `name` (its file name by default). The build puts the package's
 * `templates/` in the component: the generator reads no file when it runs.
 */
export function templateFile(path, name = undefined) {
  if (!templateFiles.has(path)) {
    const known = [...templateFiles.keys()].sort().join(', ') || 'none';
    throw new GeneratorError(`no template file ${JSON.stringify(path)} in the package (bundled: ${known})`);
  }
  return template(name ?? path.split('/').pop(), templateFiles.get(path));
}

/** A vocabulary the generator reads: the model is checked against its terms (Turtle) and shapes (SHACL). */
export function vocabulary(namespace, terms, shapes = null) {
  return Object.freeze({ namespace, terms, shapes });
}

/**
 * Who the generator is and the templates it ships. `syntax` is `jinja`
 * (`{{ }}`) or `brackets` (`[[ ]]`, `[% %]`, `[# #]`).
 */
export function meta(name, version, description, { templates = [], syntax = 'jinja', vocabularies = [] } = {}) {
  return Object.freeze({ name, version, description, templates, syntax, vocabularies });
}

let host = null;

/**
 * Sets the host the SDK calls (`query`, `hash`, `labels`, `render`,
 * `log`): `component.js` sets the component's imports; tests set their own.
 */
export function useHost(h) {
  host = h;
}

function currentHost() {
  if (host === null) {
    throw new GeneratorError('no host: build the generator with seams test-generator, or call useHost in tests');
  }
  return host;
}

function json(value) {
  let text;
  try {
    text = JSON.stringify(value, (key, v) => {
      if (typeof v === 'number' && !Number.isFinite(v)) {
        throw new TypeError(`${key || 'the value'} is ${v}, which JSON cannot hold`);
      }
      if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') {
        throw new TypeError(`${key || 'the value'} is a ${typeof v}, which JSON cannot hold`);
      }
      return v;
    });
  } catch (e) {
    throw new InvalidInput(`the view model is not JSON: ${e.message}`);
  }
  if (text === undefined) {
    throw new InvalidInput('the view model is not JSON: undefined');
  }
  return text;
}

/** Text the host rendered from one of the generator's templates; the host traces it. */
export class Rendered {
  constructor(handle) {
    this.handle = handle;
  }

  /** The rendered text. */
  text() {
    return this.handle.text();
  }
}

/** Renders the generator's `template` with `context`, an object whose keys become the template's variables. */
export function render(name, context) {
  if (context === null || typeof context !== 'object' || Array.isArray(context)) {
    throw new TemplateError(`${name}: the context must be an object, not ${Array.isArray(context) ? 'an array' : typeof context}`);
  }
  return new Rendered(currentHost().render(name, json(context)));
}

/** One output file: text the host rendered, or plain text. */
export class File {
  constructor(path, body) {
    this.path = path;
    this.body = body;
    Object.freeze(this);
  }

  /** A file whose text the host rendered (and traces). */
  static rendered(path, rendered) {
    return new File(path, rendered);
  }

  /** A file of plain text: give its trace or sources yourself. */
  static text(path, text) {
    return new File(path, text);
  }
}

/** One line of a plain-text file's own trace. */
export function traceLine(line, templates, terms) {
  return Object.freeze({ line, templates, terms });
}

/** The trace of a plain-text file. */
export function fileTrace(path, lines = []) {
  return Object.freeze({ path, lines });
}

/** The model IRIs a file without a trace was made from. */
export function fileSources(path, iris = []) {
  return Object.freeze({ path, iris });
}

/** The generator's log. */
export const log = Object.freeze({
  /** Writes an informational line to seams's output. */
  info: (message) => currentHost().log('info', String(message)),
  /** Writes a warning to seams's output. */
  warn: (message) => currentHost().log('warn', String(message)),
});

// The protocol's shapes of the SDK's values.

const SYNTAXES = ['jinja', 'brackets'];

function protocolMeta(m) {
  const text = (key) => {
    if (typeof m?.[key] !== 'string') {
      throw new GeneratorError(`meta: ${key} must be a string, not ${typeof m?.[key]}`);
    }
    return m[key];
  };
  return {
    name: text('name'),
    version: text('version'),
    description: text('description'),
    templates: (m.templates ?? []).map((t) => ({ name: String(t.name), source: String(t.source) })),
    // meta cannot fail in the protocol: an unknown syntax is jinja, whose
    // templates then fail to parse with the host's message.
    syntax: SYNTAXES.includes(m.syntax) ? m.syntax : 'jinja',
    vocabularies: (m.vocabularies ?? []).map((v) => ({
      namespace: String(v.namespace),
      terms: String(v.terms),
      shapes: v.shapes == null ? undefined : String(v.shapes),
    })),
  };
}

function protocolFile(file) {
  if (!(file instanceof File)) {
    throw new GeneratorError(`render must return File values, not ${JSON.stringify(file)}`);
  }
  if (file.body instanceof Rendered) {
    return { path: file.path, body: { tag: 'rendered', val: file.body.handle } };
  }
  if (typeof file.body === 'string') {
    return { path: file.path, body: { tag: 'text', val: file.body } };
  }
  throw new GeneratorError(`${file.path}: a file's body is rendered text or a string, not ${typeof file.body}`);
}

/**
 * An error as the protocol's: an SDK error keeps its kind; anything else is
 * `failed` naming it, its stack written to stderr (which seams shows with
 * the failure).
 */
export function protocolError(e) {
  if (e instanceof GeneratorError) {
    return { tag: e.kind, val: e.message };
  }
  if (e instanceof Error) {
    console.error(e.stack ?? String(e));
    return { tag: 'failed', val: `${e.name}: ${e.message}` };
  }
  return { tag: 'failed', val: `thrown: ${String(e)}` };
}

function guarded(call) {
  try {
    return call();
  } catch (e) {
    throw protocolError(e);
  }
}

/**
 * The object componentize-js exports as `generatorApi` for `generator`,
 * which has `meta()`, `extract(model)`, `render(view)` and optionally
 * `trace(view)` and `sources(view)`.
 */
export function serve(generator) {
  return {
    meta: () => {
      try {
        return protocolMeta(generator.meta());
      } catch (e) {
        // meta cannot fail in the protocol: the trap is the failure.
        console.error(e?.stack ?? String(e));
        throw e;
      }
    },
    extract: () => guarded(() => json(generator.extract(new Model(currentHost())))),
    render: (view) => guarded(() => [...generator.render(JSON.parse(view))].map(protocolFile)),
    trace: (view) =>
      guarded(() =>
        [...(generator.trace?.(JSON.parse(view)) ?? [])].map((t) => ({
          path: t.path,
          lines: t.lines.map((l) => ({ line: l.line, templates: [...l.templates], terms: [...l.terms] })),
        })),
      ),
    sources: (view) =>
      guarded(() => [...(generator.sources?.(JSON.parse(view)) ?? [])].map((s) => ({ path: s.path, iris: [...s.iris] }))),
  };
}
