// socbot pages: the only script (vendored, no build). A running investigation's page
// listens to the server's events (status and how many trace events) and, when they
// changed, fetches the body again. EventSource reconnects by itself.
// No inline script anywhere: the Content-Security-Policy allows only this file.
"use strict";
// "Show all" / "Show": a tool call's whole stored result fetched into its box: its rows as
// drawn by the server (a table), else the stored text
// (textContent: never parsed as HTML); without this script the link opens that text.
document.addEventListener("click", function (event) {
  var link = event.target.closest ? event.target.closest("a.all") : null;
  if (!link || event.button !== 0 || event.ctrlKey || event.metaKey) { return; }
  var call = link.closest(".call");
  var box = call ? call.querySelector(".result") : null;
  if (!box) { return; }
  event.preventDefault();
  var url = link.getAttribute("href") + (link.hasAttribute("data-table") ?
    "?as=table&anchor=" + encodeURIComponent(call.id) : "");
  var table = false;  // the answer is drawn rows (text/html), else the stored text
  fetch(url, {credentials: "same-origin"})
    .then(function (r) {
      if (!r.ok) { throw new Error("no result"); }
      table = (r.headers.get("content-type") || "").indexOf("text/html") === 0;
      return r.text();
    })
    .then(function (text) {
      var whole = document.createElement("pre");
      whole.textContent = text;
      var note = link.closest(".cut");
      var told = "all " + text.length.toLocaleString("en") + " stored characters";
      if (table) {  // our own escaped fragment, from our origin (as the live body is)
        var doc = new DOMParser().parseFromString(text, "text/html");
        whole = doc.body.firstElementChild || whole;
        told = "all " + whole.querySelectorAll("tbody tr").length.toLocaleString("en") + " rows";
      }
      whole.classList.add("result", "whole");
      box.replaceWith(whole);
      if (note) { note.textContent = told; }
    })
    .catch(function () { window.location.href = link.getAttribute("href"); });
});
(function () {
  var box = document.getElementById("investigation");
  if (!box || box.getAttribute("data-status") !== "running") { return; }
  var id = encodeURIComponent(box.getAttribute("data-id"));
  var events = new EventSource("/web/api/investigations/" + id + "/events");
  var latest = null;
  var busy = false;
  function shown(live) {
    return String(live.events) === box.getAttribute("data-events") &&
      live.status === box.getAttribute("data-status");
  }
  function pump() {
    if (busy || latest === null) { return; }
    var live = latest;
    latest = null;
    if (shown(live)) { return; }
    busy = true;
    fetch("/web/investigations/" + id + "/body", {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) { throw new Error("no body"); }
        // the server escaped every value in this fragment; it comes from our own origin
        var doc = new DOMParser().parseFromString(html, "text/html");
        box.replaceChildren.apply(box, Array.prototype.slice.call(doc.body.childNodes));
        box.setAttribute("data-events", String(live.events));
        box.setAttribute("data-status", live.status);
      })
      .catch(function () { if (latest === null) { latest = live; } })
      .then(function () {
        busy = false;
        window.setTimeout(pump, latest === live ? 2000 : 0);  // a failure waits a little
      });
  }
  events.onmessage = function (message) {
    latest = JSON.parse(message.data);
    if (latest.status !== "running") { events.close(); }
    pump();
  };
}());
