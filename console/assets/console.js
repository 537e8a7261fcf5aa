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

document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table[data-live]")) liveFunnel(table);
});
