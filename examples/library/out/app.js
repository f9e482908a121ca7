// The pages' shared script, loaded at the end of every page's body.
//
// A page opened from a list item (page.html?<entity>=<key>) has that
// record selected: its lists show what refers to it, its selects of
// that entity choose it.
var selected = new URLSearchParams(window.location.search);
function choose(select) {
  if (selected.has(select.dataset.entity)) {
    select.value = selected.get(select.dataset.entity);
  }
}
document.body.addEventListener("htmx:configRequest", function (event) {
  if (event.detail.verb === "get") {
    selected.forEach(function (value, name) {
      if (event.detail.parameters[name] === undefined) {
        event.detail.parameters[name] = value;
      }
    });
  }
});
document.body.addEventListener("htmx:afterSwap", function (event) {
  if (event.detail.elt.tagName === "SELECT") {
    choose(event.detail.elt);
  }
});
// A form whose post was saved starts empty again (the selection kept).
document.body.addEventListener("htmx:afterRequest", function (event) {
  var form = event.detail.elt;
  if (event.detail.successful && form.tagName === "FORM") {
    form.reset();
    form.querySelectorAll("select[data-entity]").forEach(choose);
  }
});
