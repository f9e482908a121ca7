// Keyboard navigation of an output: j / ArrowDown and k / ArrowUp move to
// the next and previous traced line, Enter on the edit field submits it.
// No inline script anywhere: the Content-Security-Policy forbids it.
"use strict";

document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const links = [...document.querySelectorAll("#lines a[data-line]")];
  if (links.length === 0) return;
  const down = event.key === "j" || event.key === "ArrowDown";
  const up = event.key === "k" || event.key === "ArrowUp";
  if (!down && !up) return;
  const selected = document.querySelector("#lines tr.selected a[data-line]");
  let index = selected ? links.indexOf(selected) : -1;
  index = down ? Math.min(index + 1, links.length - 1) : Math.max(index - 1, 0);
  event.preventDefault();
  window.location.assign(links[index].href);
});

// The selected line in view, and the focus on it, after a page load.
window.addEventListener("DOMContentLoaded", () => {
  const selected = document.querySelector("#lines tr.selected a[data-line]");
  if (selected) {
    selected.focus({ preventScroll: true });
    selected.scrollIntoView({ block: "center" });
  }
});
