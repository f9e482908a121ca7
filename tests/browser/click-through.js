// Clicks through generated htmx pages the way a user would, in jsdom (a
// browser DOM that runs the pages' scripts), against a running generated
// API: loads each page, lets htmx load its lists and selects, fills and
// submits every form, then opens the first item link of each page's lists,
// and reports what the pages showed, as JSON on stdout.
//
//   node click-through.js BASE_URL PAGE...
//
// The pages load htmx from the app itself (the htmx generator writes it);
// the page's integrity hash must be the one of the same pinned version in
// node_modules.

"use strict";

const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const { JSDOM, VirtualConsole } = require("jsdom");

const HTMX = fs.readFileSync(
  path.join(__dirname, "node_modules", "htmx.org", "dist", "htmx.min.js"),
);
const HTMX_INTEGRITY =
  "sha384-" + crypto.createHash("sha384").update(HTMX).digest("base64");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/// Waits until htmx has no request in flight (at most ten seconds).
async function settle(state) {
  const start = Date.now();
  let quiet = 0;
  while (Date.now() - start < 10000) {
    await sleep(50);
    quiet = state.pending === 0 ? quiet + 1 : 0;
    if (quiet >= 4) return;
  }
  throw new Error("htmx requests did not finish within 10 s");
}

const text = (el) => el.textContent.replace(/\s+/g, " ").trim();

function fill(form) {
  for (const el of form.querySelectorAll("input, textarea")) {
    if (el.type === "checkbox") el.checked = true;
    else if (el.type === "number") el.value = "3.50";
    else if (el.type === "date") el.value = "2026-11-29";
    else if (el.type === "email") el.value = "typed@example.org";
    else el.value = "Typed " + el.name;
  }
}

function isReset(form) {
  return [...form.querySelectorAll("input, textarea")].every((el) =>
    el.type === "checkbox" ? !el.checked : el.value === "",
  );
}

async function visit(base, page) {
  const errors = [];
  const virtualConsole = new VirtualConsole();
  virtualConsole.on("jsdomError", (e) => {
    // jsdom's XPath lacks what htmx's hx-on attribute scan asks for; the
    // pages use no hx-on attributes.
    if (!String(e.message).includes("XPath")) errors.push(String(e.message));
  });
  const state = { pending: 0 };
  const dom = await JSDOM.fromURL(`${base}/${page}`, {
    runScripts: "dangerously",
    resources: "usable",
    pretendToBeVisual: true,
    virtualConsole,
    beforeParse(window) {
      window.addEventListener("htmx:beforeRequest", () => state.pending++);
      window.addEventListener("htmx:afterRequest", () => state.pending--);
    },
  });
  const doc = dom.window.document;
  await settle(state);
  const script = doc.querySelector('script[src="htmx.min.js"]');
  const report = {
    page,
    integrity_ok: !!script && script.getAttribute("integrity") === HTMX_INTEGRITY,
    lists_before: [...doc.querySelectorAll("ul")].map(text),
    forms: [],
    lists_after: [],
    errors,
  };
  for (const form of doc.querySelectorAll("form")) {
    fill(form);
    const selects = [...form.querySelectorAll("select")].map((s) => ({
      name: s.name,
      entity: s.dataset.entity || null,
      options: s.options.length,
      value: s.value,
    }));
    form.requestSubmit();
    await settle(state);
    const entry = {
      id: form.id,
      selects,
      result: text(doc.getElementById(`${form.id}-result`)),
      reset: isReset(form),
    };
    // A form with a fixed choice (a status) is sent again with its last
    // option, which a status flow may refuse: the page must show why and
    // keep what was typed.
    const fixed = [...form.querySelectorAll("select:not([hx-get])")].find(
      (s) => s.options.length > 1,
    );
    if (fixed) {
      fill(form);
      fixed.selectedIndex = fixed.options.length - 1;
      form.requestSubmit();
      await settle(state);
      entry.last_option = {
        value: fixed.value,
        result: text(doc.getElementById(`${form.id}-result`)),
        reset: isReset(form),
      };
    }
    report.forms.push(entry);
  }
  report.lists_after = [...doc.querySelectorAll("ul")].map(text);
  // The links list items offer: a page with that item selected.
  report.item_links = [...doc.querySelectorAll("ul li a.flow")].map((a) =>
    a.getAttribute("href"),
  );
  dom.window.close();
  return report;
}

(async () => {
  const [base, ...pages] = process.argv.slice(2);
  const reports = [];
  for (const page of pages) reports.push(await visit(base, page));
  // Then each page's first item link, as a user picking a record would.
  for (const link of reports.flatMap((r) => r.item_links.slice(0, 1))) {
    reports.push({ ...(await visit(base, link)), followed: true });
  }
  process.stdout.write(JSON.stringify(reports, null, 2) + "\n");
})().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
