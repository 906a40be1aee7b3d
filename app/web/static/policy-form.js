// The Policy page's form, checked as you type: the form's values go to /policies/validate (the same
// check as the save, nothing saved) and each problem is shown next to its field. Without this file the
// form still works: the save checks the values and shows the problems the same way.
// Kept out of the template so that the Content-Security-Policy can forbid inline script; the only
// inputs are the form's own fields and the server's JSON, shown as text, never as HTML.
"use strict";

(function () {
  var form = document.getElementById("policy-form");
  if (!form || !form.hasAttribute("data-validate")) {
    return; // no form, or a read-only one (viewers)
  }
  var url = form.getAttribute("data-validate");
  var statusLine = form.querySelector("[data-validate-status]");
  var slots = {};
  Array.prototype.forEach.call(form.querySelectorAll("[data-error-for]"), function (slot) {
    slots[slot.getAttribute("data-error-for")] = slot;
  });
  var inputs = Array.prototype.slice.call(form.querySelectorAll("[data-field]"));
  var timer = null;
  var asked = 0; // the newest request: an older answer arriving late is dropped

  function say(text, problem) {
    if (statusLine) {
      statusLine.textContent = text;
      statusLine.classList.toggle("problem", Boolean(problem));
    }
  }

  function show(errors) {
    var byField = {};
    errors.forEach(function (e) {
      var field = Object.prototype.hasOwnProperty.call(slots, e.field) ? e.field : "";
      (byField[field] = byField[field] || []).push(e.message);
    });
    Object.keys(slots).forEach(function (field) {
      var messages = byField[field] || [];
      slots[field].textContent = messages.join("\n");
    });
    inputs.forEach(function (input) {
      if (byField[input.getAttribute("data-field")]) {
        input.setAttribute("aria-invalid", "true");
      } else {
        input.removeAttribute("aria-invalid");
      }
    });
  }

  function check() {
    var mine = ++asked;
    say("Checking…", false);
    fetch(url, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "Accept": "application/json" },
    })
      .then(function (response) {
        var type = response.headers.get("content-type") || "";
        if (!response.ok || response.redirected || type.indexOf("application/json") !== 0) {
          throw new Error("status " + response.status);
        }
        return response.json();
      })
      .then(function (answer) {
        if (mine !== asked) {
          return;
        }
        show(answer.errors || []);
        if (!answer.valid) {
          var n = (answer.errors || []).length;
          say(n === 1 ? "1 problem: see the marked field." : n + " problems: see the marked fields.", true);
        } else if ((answer.changes || []).length === 0) {
          say("The values are valid; nothing changed yet.", false);
        } else {
          var c = answer.changes.length;
          say("The values are valid: " + (c === 1 ? "1 change" : c + " changes") + " to save.", false);
        }
      })
      .catch(function () {
        if (mine === asked) {
          say("Could not check the values now (your login may have ended); saving checks them anyway.", true);
        }
      });
  }

  function later() {
    window.clearTimeout(timer);
    timer = window.setTimeout(check, 300);
  }

  form.addEventListener("input", later);
  form.addEventListener("change", later);
})();
