// socbot pages: the only script (vendored, no build). A running investigation's page
// asks every 2 s whether its trace grew and, when it did, fetches the body again.
// No inline script anywhere: the Content-Security-Policy allows only this file.
"use strict";
(function () {
  var box = document.getElementById("investigation");
  if (!box) { return; }
  var id = box.getAttribute("data-id");
  var seen = box.getAttribute("data-events");
  function poll() {
    if (box.getAttribute("data-status") !== "running") { return; }
    fetch("/web/api/investigations/" + encodeURIComponent(id) + "/live", {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (live) {
        if (!live) { return null; }
        if (String(live.events) === seen && live.status === "running") { return null; }
        seen = String(live.events);
        box.setAttribute("data-status", live.status);
        return fetch("/web/investigations/" + encodeURIComponent(id) + "/body", {credentials: "same-origin"})
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (html === null) { return; }
            // the server escaped every value in this fragment; it comes from our own origin
            var doc = new DOMParser().parseFromString(html, "text/html");
            box.replaceChildren.apply(box, Array.prototype.slice.call(doc.body.childNodes));
            box.setAttribute("data-events", seen);
          });
      })
      .catch(function () { /* the next poll tries again */ })
      .then(function () { window.setTimeout(poll, 2000); });
  }
  window.setTimeout(poll, 2000);
}());
