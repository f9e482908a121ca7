// The SDK's side of the component: the host's imports, as componentize-js
// binds them from `wit/generator.wit`, given to the SDK (`useHost`).
// Nothing here is written against the WIT's layout that the bindings do
// not give.

import { query, hash, labels } from 'seams:generator/model@0.2.0';
import { render } from 'seams:generator/templates@0.2.0';
import { write } from 'seams:generator/log@0.2.0';

import { GeneratorError, QueryError, TemplateError, serve, useHost } from './index.js';

// The text of a host error: a `result`'s error arrives as a thrown value
// whose payload is the WIT `error` variant.
function message(e) {
  const variant = e?.payload ?? e;
  return String(variant?.val ?? variant?.message ?? variant);
}

useHost({
  query(sparql) {
    try {
      return query(sparql);
    } catch (e) {
      throw new QueryError(message(e));
    }
  },
  hash: () => hash(),
  labels: () => labels().map((l) => [l.iri, l.label]),
  render(name, context) {
    try {
      return render(name, context);
    } catch (e) {
      throw new TemplateError(message(e));
    }
  },
  log: (level, text) => write(level === 'warn' ? 'warn' : 'info', text),
});

// A generator has no network: the sandbox gives it none, and a fetch would
// stop the component with no word of why. Say it instead.
globalThis.fetch = (resource) => {
  throw new GeneratorError(`fetch(${JSON.stringify(String(resource))}): a generator has no network or files; read the model through the host`);
};

export { serve };
