// Types of seams-sdk for JavaScript and TypeScript (index.js).

/** This SDK's version. */
export const VERSION: string;
/** The protocol version this SDK builds against (`wit/generator.wit`). */
export const PROTOCOL: string;

/** The protocol's error cases. */
export type ErrorKind = 'invalid-input' | 'query' | 'template' | 'failed';

/** A generator's failure, reported to the host with its message. */
export class GeneratorError extends Error {
  constructor(message: string);
  /** The protocol's error case this maps to. */
  readonly kind: ErrorKind;
}
/** The model does not hold what the generator needs. */
export class InvalidInput extends GeneratorError {}
/** A query failed, or its answer is not what was asked for. */
export class QueryError extends GeneratorError {}
/** The host could not render a template. */
export class TemplateError extends GeneratorError {}

/** One bound value of a query row. */
export class Term {
  constructor(kind: Term['kind'], value: string, datatype?: string | null, language?: string | null);
  readonly kind: 'iri' | 'literal' | 'blank' | 'triple';
  /** The IRI, the literal's lexical form, or the blank node's label. */
  readonly value: string;
  /** A literal's datatype IRI, when it is not xsd:string. */
  readonly datatype: string | null;
  /** A literal's language tag. */
  readonly language: string | null;
}

/** One row of a SELECT answer: variable name (without `?`) to term. */
export class Row {
  constructor(terms: Record<string, Term>);
  readonly terms: Readonly<Record<string, Term>>;
  /** The bound variables, sorted. */
  vars(): string[];
  /** The term bound to `name`, or undefined. */
  get(name: string): Term | undefined;
  /** The value (IRI or lexical form) bound to `name`, or undefined. */
  value(name: string): string | undefined;
  /** The value bound to `name`; throws a QueryError naming it when unbound. */
  require(name: string): string;
  /** The IRI bound to `name`; throws a QueryError when unbound or not an IRI. */
  iri(name: string): string;
}

/** The rows of a SPARQL 1.1 JSON results answer. */
export function rowsOf(answer: string): Row[];

/** What the SDK asks of the host: the component's imports, or a test's fake. */
export interface Host {
  query(sparql: string): string;
  hash(): string;
  labels(): [string, string][];
  render(template: string, context: string): { text(): string };
  log(level: 'info' | 'warn', message: string): void;
}

/** Read-only access to the project's model, through the host. */
export class Model {
  constructor(host: Host);
  /** The host's raw answer: SPARQL 1.1 JSON results for SELECT and ASK, N-Triples for CONSTRUCT. */
  query(sparql: string): string;
  /** Runs a SELECT query; its rows, in the order the query gives. */
  select(sparql: string): Row[];
  /** Runs an ASK query. */
  ask(sparql: string): boolean;
  /** The model hash (sha256 of the canonical N-Quads, lowercase hex). */
  hash(): string;
  /** Every labelled subject as `[iri, label]`, sorted by IRI. */
  labels(): [string, string][];
}

/** A JSON value of a view model. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** A view object: fields, the model element's `iri`, and the further elements its extraction read. */
export type Traced<F extends Record<string, Json>> = Omit<F, 'iri' | 'origins'> & {
  iri: string;
  origins?: string[];
};

/**
 * A view object for the model element `iri`: lines printing a value read
 * off it are traced to `iri` and `origins` (sorted, each once), given
 * among the fields (`traced(iri, {origins: [...], label})`, as Python's
 * `traced(iri, origins=[...], label=...)`) or third. A field named `iri`
 * is refused.
 */
export function traced<F extends Record<string, Json> & { iri?: never; origins?: string[] }>(
  iri: string,
  fields?: F,
  origins?: Iterable<string>,
): Traced<F>;

/** One of the generator's templates. */
export interface Template {
  readonly name: string;
  readonly source: string;
}
/** A template given as text. */
export function template(name: string, source: string): Template;
/** The template in `path`, relative to the package, which the build puts in the component. */
export function templateFile(path: string, name?: string): Template;
/** Registers the package's template files (path -> text); the build calls it. */
export function registerTemplateFiles(files: Record<string, string>): void;

/** A vocabulary the generator reads: the model is checked against its terms and shapes (Turtle). */
export interface Vocabulary {
  readonly namespace: string;
  readonly terms: string;
  readonly shapes: string | null;
}
/** A vocabulary the generator reads: its namespace, its terms (Turtle) and, optionally, its SHACL shapes; the model is checked against it before the generator runs. */
export function vocabulary(namespace: string, terms: string, shapes?: string | null): Vocabulary;

/** Template syntax: `jinja` (`{{ }}`) or `brackets` (`[[ ]]`, `[% %]`, `[# #]`). */
export type Syntax = 'jinja' | 'brackets';

/** Who the generator is and the templates it ships. */
export interface Meta {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly templates: readonly Template[];
  readonly syntax: Syntax;
  readonly vocabularies: readonly Vocabulary[];
}
/** Who the generator is (name, version, description) and what it ships: its templates, their syntax, the vocabularies it reads. */
export function meta(
  name: string,
  version: string,
  description: string,
  options?: { templates?: readonly Template[]; syntax?: Syntax; vocabularies?: readonly Vocabulary[] },
): Meta;

/** Sets the host the SDK calls; `component.js` sets the component's imports. */
export function useHost(host: Host): void;

/** Text the host rendered from one of the generator's templates; the host traces it. */
export class Rendered {
  /** The rendered text. */
  text(): string;
}

/** Renders the generator's `template` with `context`, whose keys become the template's variables. */
export function render(template: string, context: Record<string, unknown>): Rendered;

/** One output file: text the host rendered, or plain text. */
export class File {
  readonly path: string;
  readonly body: Rendered | string;
  /** A file whose text the host rendered (and traces). */
  static rendered(path: string, rendered: Rendered): File;
  /** A file of plain text: give its trace or sources yourself. */
  static text(path: string, text: string): File;
}

/** One line of a plain-text file's own trace. */
export interface TraceLine {
  readonly line: number;
  readonly templates: readonly string[];
  readonly terms: readonly string[];
}
/** One line of a plain-text file's own trace: the 1-based line, the template lines (`name:line`) and the model IRIs behind it. */
export function traceLine(line: number, templates: readonly string[], terms: readonly string[]): TraceLine;
/** The trace of a plain-text file. */
export interface FileTrace {
  readonly path: string;
  readonly lines: readonly TraceLine[];
}
/** The trace of a plain-text file (`trace`'s answer for it). */
export function fileTrace(path: string, lines?: readonly TraceLine[]): FileTrace;
/** The model IRIs a file without a trace was made from. */
export interface FileSources {
  readonly path: string;
  readonly iris: readonly string[];
}
/** The model IRIs a file without a trace was made from (`sources`' answer for it). */
export function fileSources(path: string, iris?: readonly string[]): FileSources;

/** The generator's log. */
export const log: {
  info(message: unknown): void;
  warn(message: unknown): void;
};

/** A seams generator: the one object to implement. */
export interface Generator<V = Record<string, unknown>> {
  /** Describes the generator. Called first; must not query the model. */
  meta(): Meta;
  /** Reads the model into the view model (JSON values). */
  extract(model: Model): V;
  /** Turns the view model into files. */
  render(view: V): Iterable<File>;
  /** Traces of the plain-text files `render` returned. */
  trace?(view: V): Iterable<FileTrace>;
  /** Lock sources of files that have no trace. */
  sources?(view: V): Iterable<FileSources>;
}

/** The protocol error an exception maps to. */
export function protocolError(e: unknown): { tag: ErrorKind; val: string };

/** The object componentize-js exports as `generatorApi` for `generator`. */
export function serve(generator: Generator<any>): unknown;
