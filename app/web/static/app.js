// Page behaviour, kept out of the templates so that the Content-Security-Policy can forbid inline script
// (script-src 'self'): no template value is ever placed inside JavaScript. Values reach this file only as
// data-* attributes, which the browser hands over as plain strings.
"use strict";

// <form data-confirm="question">: ask before submitting; the text is shown, never evaluated.
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (!(form instanceof HTMLFormElement)) {
    return;
  }
  var question = form.getAttribute("data-confirm");
  if (question !== null && !window.confirm(question)) {
    event.preventDefault();
  }
});

// The Recommendations workbench: select-all, the selection count, and suppress in place.
(function () {
  var form = document.getElementById("review-form");
  if (!form) {
    return;
  }
  var picks = function () {
    return Array.prototype.slice.call(form.querySelectorAll("input.pick"));
  };
  var all = form.querySelector("[data-select-all]");
  var count = form.querySelector("[data-selected-count]");
  var statusLine = form.querySelector(".workbench-bar .status-line");

  function refresh() {
    var boxes = picks();
    var n = boxes.filter(function (b) { return b.checked; }).length;
    if (count) {
      count.textContent = n + " selected";
    }
    if (all) {
      all.checked = boxes.length > 0 && n === boxes.length;
      all.indeterminate = n > 0 && n < boxes.length;
    }
  }

  if (all) {
    all.hidden = false;
    all.addEventListener("change", function () {
      picks().forEach(function (b) { b.checked = all.checked; });
      refresh();
    });
  }
  form.addEventListener("change", function (event) {
    if (event.target instanceof HTMLInputElement && event.target.classList.contains("pick")) {
      refresh();
    }
  });
  refresh();

  function say(text, problem) {
    if (statusLine) {
      statusLine.textContent = text;
      statusLine.title = text;
      statusLine.classList.toggle("problem", Boolean(problem));
    }
  }

  function field(name) {
    var input = form.querySelector('input[name="' + name + '"]');
    return input ? input.value : "";
  }

  function liftForm(supId) {
    // the same form the server writes for a suppression, built from values already in the page
    var id = "lift-" + supId;
    if (document.getElementById(id)) {
      return id;
    }
    var lift = document.createElement("form");
    lift.id = id;
    lift.method = "post";
    lift.action = "/suppressions/" + encodeURIComponent(String(supId)) + "/lift";
    [["csrf_token", field("csrf_token")], ["back", field("back")]].forEach(function (pair) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = pair[0];
      input.value = pair[1];
      lift.appendChild(input);
    });
    document.body.appendChild(lift);
    return id;
  }

  function markSuppressed(recId, info) {
    var row = form.querySelector('tr[data-id="' + String(Number(recId)) + '"]');
    if (!row) {
      return;
    }
    row.classList.add("suppressed");
    var box = row.querySelector("input.pick");
    if (box) {
      box.checked = false;
    }
    var slot = row.querySelector(".sup-slot");
    if (!slot) {
      return;
    }
    slot.textContent = "";
    var badge = document.createElement("span");
    badge.className = "badge deferred";
    badge.textContent = "suppressed";
    var text = document.createElement("span");
    text.className = "muted";
    text.textContent = String(info.text);
    text.title = String(info.text);
    var button = document.createElement("button");
    button.type = "submit";
    button.className = "secondary";
    button.textContent = "Lift";
    button.setAttribute("form", liftForm(info.suppression));
    slot.appendChild(badge);
    slot.appendChild(button);  // before the text, which may be cut short to keep the row's height
    slot.appendChild(document.createTextNode(" "));
    slot.appendChild(text);
  }

  // Suppress without reloading: the rows stay where they are and are marked in place.
  form.addEventListener("submit", function (event) {
    var submitter = event.submitter;
    if (!submitter || !submitter.hasAttribute("data-suppress") || !window.fetch) {
      return;
    }
    event.preventDefault();
    var body = new URLSearchParams(new FormData(form));
    window.fetch("/recommendations/suppress", {
      method: "POST",
      body: body,
      headers: { "Accept": "application/json" },
      credentials: "same-origin",
    }).then(function (response) {
      return response.json().then(function (data) {
        return { ok: response.ok, data: data };
      });
    }).then(function (result) {
      say(String(result.data.message || ""), !result.ok);
      if (result.ok) {
        Object.keys(result.data.rows || {}).forEach(function (recId) {
          markSuppressed(recId, result.data.rows[recId]);
        });
        refresh();
      }
    }).catch(function () {
      say("The suppression could not be sent; reload the page and try again.", true);
    });
  });
})();
