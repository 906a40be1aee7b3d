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
