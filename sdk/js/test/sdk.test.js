// The SDK's values, run on Node.js with a fake host (the component's host
// is the protocol's imports; tests/e2e/js.rs runs the component).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as seams from '../index.js';

const answer = (...rows) => JSON.stringify({ head: { vars: [] }, results: { bindings: rows } });

function fakeHost(text) {
  const host = {
    rendered: [],
    logged: [],
    query: () => text,
    render(name, context) {
      host.rendered.push([name, context]);
      return { text: () => `${name}!` };
    },
    log: (level, message) => host.logged.push([level, message]),
  };
  return host;
}

test('terms keep their kind, datatype and language; rows sort their variables', () => {
  const [row] = seams.rowsOf(
    answer({
      s: { type: 'literal', value: 'x', datatype: 'http://www.w3.org/2001/XMLSchema#string' },
      a: { type: 'uri', value: 'urn:a' },
      n: { type: 'literal', value: '3', datatype: 'http://www.w3.org/2001/XMLSchema#integer' },
      l: { type: 'literal', value: 'chat', 'xml:lang': 'en' },
      b: { type: 'bnode', value: 'b0' },
    }),
  );
  assert.deepEqual(row.get('a'), new seams.Term('iri', 'urn:a'));
  assert.deepEqual(row.get('s'), new seams.Term('literal', 'x'));
  assert.equal(row.get('n').datatype, 'http://www.w3.org/2001/XMLSchema#integer');
  assert.equal(row.get('l').language, 'en');
  assert.equal(row.get('b').kind, 'blank');
  assert.deepEqual(row.vars(), ['a', 'b', 'l', 'n', 's']);
});

test('an unbound or wrong variable names itself', () => {
  const [row] = seams.rowsOf(answer({ s: { type: 'literal', value: 'x' } }));
  assert.equal(row.value('missing'), undefined);
  assert.equal(row.value('constructor'), undefined, 'no inherited names');
  assert.throws(() => row.require('missing'), { name: 'QueryError', message: /\?missing is unbound/ });
  assert.throws(() => row.iri('s'), (e) => e instanceof seams.QueryError && /\?s is bound to a literal, not an IRI/.test(e.message));
});

test('an answer that is not a SELECT is a query error', () => {
  assert.throws(() => seams.rowsOf('{"boolean": true}'), seams.QueryError);
  assert.throws(() => seams.rowsOf('not json'), seams.QueryError);
  assert.throws(() => seams.rowsOf(answer({ a: { type: 'weird', value: 'x' } })), /unknown type "weird"/);
});

test('a view object sorts its origins once each and keeps iri its own', () => {
  assert.throws(() => seams.traced('urn:a', { iri: 'urn:b' }), seams.InvalidInput);
  assert.throws(() => seams.traced('urn:a', { origins: 'urn:b' }), seams.InvalidInput);
  // Origins among the fields are kept, as Python's traced(iri, origins=[...]).
  assert.deepEqual(seams.traced('urn:a', { label: 'A', origins: ['urn:c', 'urn:b'] }), {
    label: 'A',
    iri: 'urn:a',
    origins: ['urn:b', 'urn:c'],
  });
  const view = seams.traced('urn:a', { label: 'A' }, ['urn:c', 'urn:b', 'urn:c']);
  assert.deepEqual(view, { label: 'A', iri: 'urn:a', origins: ['urn:b', 'urn:c'] });
  assert.equal('origins' in seams.traced('urn:a'), false);
  assert.throws(() => seams.traced(''), seams.InvalidInput);
});

test('render sends the context as compact JSON and refuses what JSON cannot hold', () => {
  const host = fakeHost(answer());
  seams.useHost(host);
  assert.equal(seams.render('t.html', { x: 'é', n: [1, 2] }).text(), 't.html!');
  assert.deepEqual(host.rendered, [['t.html', '{"x":"é","n":[1,2]}']]);
  assert.throws(() => seams.render('t.html', ['not', 'an', 'object']), seams.TemplateError);
  assert.throws(() => seams.render('t.html', { x: NaN }), seams.InvalidInput);
  assert.throws(() => seams.render('t.html', { x: 1n }), seams.InvalidInput);
});

test('served, errors keep their kind and anything else fails naming its type', () => {
  seams.useHost(fakeHost(answer({ a: { type: 'uri', value: 'urn:a' } })));
  const api = seams.serve({
    meta: () => seams.meta('g', '0.1.0', 'd', { syntax: 'nonsense', templates: [seams.template('t', 'x')] }),
    extract(model) {
      return { a: seams.traced(model.select('SELECT ?a {}')[0].iri('a')) };
    },
    render(view) {
      if (view.a.iri === 'urn:a') {
        throw new seams.InvalidInput('no a');
      }
      return [];
    },
    trace() {
      throw new RangeError('bad');
    },
  });
  assert.deepEqual(api.meta(), {
    name: 'g',
    version: '0.1.0',
    description: 'd',
    templates: [{ name: 't', source: 'x' }],
    syntax: 'jinja',
    vocabularies: [],
  });
  assert.equal(api.extract(), '{"a":{"iri":"urn:a"}}');
  assert.throws(() => api.render('{"a":{"iri":"urn:a"}}'), (e) => e.tag === 'invalid-input' && e.val === 'no a');
  const stderr = console.error;
  console.error = () => {};
  try {
    assert.throws(() => api.trace('{}'), (e) => e.tag === 'failed' && e.val === 'RangeError: bad');
  } finally {
    console.error = stderr;
  }
  assert.deepEqual(api.sources('{}'), [], 'sources is optional');
});

test('files become the protocol shapes and template files come from the build', () => {
  seams.useHost(fakeHost(answer()));
  const api = seams.serve({
    meta: () => seams.meta('g', '0.1.0', 'd'),
    extract: () => ({}),
    render: () => [seams.File.text('a.txt', 'hi\n'), seams.File.rendered('b.html', seams.render('b.html', {}))],
  });
  const [text, rendered] = api.render('{}');
  assert.deepEqual(text, { path: 'a.txt', body: { tag: 'text', val: 'hi\n' } });
  assert.equal(rendered.body.tag, 'rendered');
  assert.throws(() => seams.templateFile('templates/missing.html'), /no template file "templates\/missing.html" in the package/);
  seams.registerTemplateFiles({ 'templates/page.html': '<p>[[ x ]]</p>\n' });
  assert.deepEqual(seams.templateFile('templates/page.html'), { name: 'page.html', source: '<p>[[ x ]]</p>\n' });
  assert.equal(seams.templateFile('templates/page.html', 'other.html').name, 'other.html');
});

test('the log goes to the host', () => {
  const host = fakeHost(answer());
  seams.useHost(host);
  seams.log.info('one');
  seams.log.warn(2);
  assert.deepEqual(host.logged, [['info', 'one'], ['warn', '2']]);
});
