// Shared by the app's pages: calls into the engine through Tauri commands (the pages do no
// network access of their own and hold no product rules: what they show, the engine computed)
// and redraws when the engine says something changed.
const { invoke } = window.__TAURI__.core;
const { listen } = window.__TAURI__.event;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== false && v !== null && v !== undefined) e.setAttribute(k, v === true ? "" : v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return e;
}

function onChange(redraw) {
  redraw();
  listen("changed", redraw);
}

// What a change said, next to the control that made it (and to screen readers: `said` nodes
// are live regions).
function say(node, ok, text) {
  node.className = "said " + (ok ? "ok" : "error");
  node.textContent = text;
}

// Runs a change; says "Saved" or the engine's refusal (which names the key and what is allowed)
// beside the control, and marks the control invalid while it is refused.
async function apply(what, said, control, ok = "Saved") {
  try {
    await what();
    say(said, true, ok);
    control?.removeAttribute("aria-invalid");
    return true;
  } catch (e) {
    say(said, false, String(e));
    control?.setAttribute("aria-invalid", "true");
    return false;
  }
}

// Rows are rebuilt only when what they show changed: a redraw under the pointer would swallow
// a click (and flicker a hovered row), and one under the keyboard would lose its focus.
const drawn = {};
function unchanged(name, data) {
  const key = JSON.stringify(data);
  if (drawn[name] === key) return true;
  drawn[name] = key;
  return false;
}
