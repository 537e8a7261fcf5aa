// Herald's console: the one script, loaded from Herald itself (the Content-Security-Policy
// allows no other and no inline script). Pages work without it; it adds confirmations.
"use strict";
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) event.preventDefault();
});
