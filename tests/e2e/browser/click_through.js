// Clicks through the generated htmx page the browser has open, the way a
// user would: lets htmx load its lists and selects, fills and submits every
// form, and reports what the page showed. Run by tests/e2e/browser.rs in
// Chromium through WebDriver's "execute async script": `arguments[0]` is
// the integrity hash the page must pin htmx with, the last argument the
// callback that takes the report.
"use strict";
const [integrity, done] = [arguments[0], arguments[arguments.length - 1]];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (el) => (el ? el.textContent.replace(/\s+/g, " ").trim() : null);

// Until no element has a request in flight for 200 ms (at most ten seconds).
async function settle() {
  const start = Date.now();
  let quiet = 0;
  while (Date.now() - start < 10000) {
    await sleep(50);
    quiet = document.querySelector(".htmx-request") ? 0 : quiet + 1;
    if (quiet >= 4) return;
  }
  throw new Error("htmx requests did not finish within 10 s");
}

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

async function visit() {
  const errors = [];
  window.addEventListener("error", (e) => errors.push(String(e.message)));
  await settle();
  const script = document.querySelector('script[src="htmx.min.js"]');
  const report = {
    page: location.pathname.slice(1) + location.search,
    // The browser runs a script only when it matches its integrity hash.
    integrity_ok:
      !!script && script.getAttribute("integrity") === integrity && typeof htmx === "object",
    lists_before: [...document.querySelectorAll("ul")].map(text),
    forms: [],
    lists_after: [],
    errors,
  };
  for (const form of document.querySelectorAll("form")) {
    // Not `form.id`: a field named "id" shadows it.
    const id = form.getAttribute("id");
    fill(form);
    const selects = [...form.querySelectorAll("select")].map((s) => ({
      name: s.name,
      entity: s.dataset.entity || null,
      options: s.options.length,
      value: s.value,
    }));
    form.requestSubmit();
    await settle();
    const entry = {
      id,
      selects,
      result: text(document.getElementById(`${id}-result`)),
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
      await settle();
      entry.last_option = {
        value: fixed.value,
        result: text(document.getElementById(`${id}-result`)),
        reset: isReset(form),
      };
    }
    report.forms.push(entry);
  }
  report.lists_after = [...document.querySelectorAll("ul")].map(text);
  // The links list items offer: a page with that item selected.
  report.item_links = [...document.querySelectorAll("ul li a.flow")].map((a) =>
    a.getAttribute("href"),
  );
  return report;
}

visit().then(done, (e) => done({ error: String(e && e.stack ? e.stack : e) }));
