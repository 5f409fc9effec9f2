// Shared by the app's pages: calls into the engine through Tauri commands (the pages do no
// network access of their own) and redraws when the engine says something changed.
const { invoke } = window.__TAURI__.core;
const { listen } = window.__TAURI__.event;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return e;
}

function onChange(redraw) {
  redraw();
  listen("changed", redraw);
}
