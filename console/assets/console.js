// Herald's console: the one script, loaded from Herald itself (the Content-Security-Policy
// allows no other and no inline script). Pages work without it; it adds confirmations,
// the funnel's live counts and the composer's live audience size and payload.
"use strict";

document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) event.preventDefault();
});

// A message's funnel, live: the server sends its counts each time they change.
function liveFunnel(table) {
  const source = new EventSource(table.dataset.live);
  const state = document.getElementById("funnel-state");
  source.addEventListener("funnel", (event) => {
    const counts = JSON.parse(event.data);
    for (const output of table.querySelectorAll("output[data-key]")) {
      const count = counts[output.dataset.key];
      if (count !== undefined && String(count) !== output.textContent) output.textContent = String(count);
    }
    if (state) state.textContent = counts.done ? "Delivery is done." : "Being delivered…";
  });
  source.addEventListener("end", () => source.close());
}

// A chosen key file's text goes into the field the form sends (the page works without
// this: the key can be pasted).
document.addEventListener("change", (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || !input.dataset.fills || !input.files || !input.files[0]) return;
  const target = document.getElementById(input.dataset.fills);
  input.files[0].text().then((text) => { if (target) target.value = text; });
});

// Copy buttons: the text of the element they name.
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (source && navigator.clipboard) {
    navigator.clipboard.writeText(source.textContent.trim()).then(() => { button.textContent = "Copied"; });
  }
});

// The dashboard: the page fetched again every few seconds, its live part swapped in.
function refresh(part) {
  const seconds = Number(part.dataset.refresh) || 10;
  setInterval(() => {
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
      .then((html) => {
        const fresh = new DOMParser().parseFromString(html, "text/html").getElementById(part.id);
        if (fresh) part.replaceChildren(...fresh.childNodes);
      })
      .catch(() => {});
  }, seconds * 1000);
}

// The composer, live: the lock screen follows the title and text as they are typed, and
// the audience's size (and whether the form makes a push at all) is asked of the server a
// moment after the last change.
function liveComposer(form) {
  const title = form.querySelector("#title");
  const alert = form.querySelector("#alert");
  const lockTitle = document.getElementById("lock-title");
  const lockBody = document.getElementById("lock-body");
  const size = document.getElementById("live-size");
  let timer;
  const ask = () => {
    const fields = new URLSearchParams(new FormData(form));
    fields.delete("password");
    fetch(form.dataset.preview, { method: "POST", credentials: "same-origin", body: fields })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((answer) => {
        if (!size) return;
        if (answer.error) {
          size.textContent = "Not a push yet: " + answer.error;
        } else {
          let text = "Audience now: " + answer.audienceSize + " devices.";
          if (answer.apnsBytes !== undefined) text += " APNs payload: " + answer.apnsBytes + " of " + answer.apnsLimit + " bytes.";
          size.textContent = text;
        }
      })
      .catch(() => {});
  };
  form.addEventListener("input", (event) => {
    if (event.target === title && lockTitle) lockTitle.textContent = title.value;
    if (event.target === alert && lockBody) lockBody.textContent = alert.value;
    clearTimeout(timer);
    timer = setTimeout(ask, 400);
  });
  form.addEventListener("change", () => { clearTimeout(timer); timer = setTimeout(ask, 100); });
}

document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table[data-live]")) liveFunnel(table);
  for (const form of document.querySelectorAll("form[data-preview]")) liveComposer(form);
  for (const part of document.querySelectorAll("[data-refresh]")) refresh(part);
});
