// Shared by the app's pages: calls into the engine through Tauri commands (the pages do no
// network access of their own and hold no product rules: what they show, the engine computed)
// and redraws when the engine says something changed.
const { invoke } = window.__TAURI__.core;
const { listen } = window.__TAURI__.event;

// The page's words, in the person's language, from the engine's catalogue (the windows process
// puts them here before this script runs); each `{name}` in one is filled by `t`.
const WORDS = window.__CMUX_WORDS__ ?? { language: "en", locale: "en-GB", words: {} };
// One pass with a function: a value is put in as it is (no `$&` read specially), and a `{slot}`
// inside a value is never filled again.
function t(id, vars = {}) {
  const said = WORDS.words[id] ?? id;
  return said.replace(/\{([A-Za-z0-9_]+)\}/g, (slot, name) => (Object.hasOwn(vars, name) ? String(vars[name]) : slot));
}
// Numbers and dates as the person's locale writes them.
const number = (n) => new Intl.NumberFormat(WORDS.locale).format(n);
const dateTime = (ms) => new Intl.DateTimeFormat(WORDS.locale, { dateStyle: "medium", timeStyle: "short" }).format(new Date(ms));
// The page's fixed words: `data-t` names an element's text, `data-t-label` its aria-label,
// `data-t-placeholder` its placeholder; the document's language and title follow.
function translate() {
  document.documentElement.lang = WORDS.language;
  for (const e of document.querySelectorAll("[data-t]")) e.textContent = t(e.dataset.t);
  for (const e of document.querySelectorAll("[data-t-label]")) e.setAttribute("aria-label", t(e.dataset.tLabel));
  for (const e of document.querySelectorAll("[data-t-placeholder]")) e.setAttribute("placeholder", t(e.dataset.tPlaceholder));
}

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
async function apply(what, said, control, ok = t("page-saved")) {
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
