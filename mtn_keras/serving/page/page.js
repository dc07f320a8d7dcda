// The search box: a WAI-ARIA combobox whose list comes from the model's `complete` signature
// while something is typed and `suggest` when nothing is, the session so far (the trail) as
// its context, and the person's own history only if they ask for it, kept in this browser.
import { kept } from "./secrets.js";
import { counted, mayShow, normalise, safetyRules, strip, whyEmpty } from "./words.js";

const MODEL = document.querySelector('meta[name="mtn-model"]').content;
const DEBOUNCE_MS = 30; // a request waits this long for the next key, then goes
const HISTORY_SIZE = 200; // the latest earlier queries a model reads
const MAX_KEPT = 2000; // the searches this browser keeps at most
const MAX_ROW = 1000; // the queries of a session or a history the server takes
const STORE = "mtn-keras.history";
const KEEP = "mtn-keras.keep-history";
const FINISHED = /[\p{P}\p{S}\p{Z}\p{C}]$/u;
const NON_FINITE = /"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g;
const $ = (id) => document.getElementById(id);
const box = $("query");
const list = $("suggestions");

// The page's state; `timings` (key pressed, request sent, answer read, list drawn, in
// performance.now() ms, for each list drawn) are what the tests and the benchmark read.
const state = { trail: [], began: Date.now(), items: [], active: -1, sent: 0, drawn: 0,
  pressed: 0, timer: 0, asking: false, waiting: null, closed: false, signatures: new Set(),
  rules: null };
window.searchPage = { state, timings: [], ready: false };

/** The answer's JSON, TensorFlow Serving's -Infinity and NaN (outside strings) read as null. */
function parse(text) {
  return JSON.parse(text.replace(NON_FINITE, (found) => (found[0] === '"' ? found : "null")));
}

function stored() {
  try {
    const entries = JSON.parse(localStorage.getItem(STORE) || "[]");
    return Array.isArray(entries) ? entries : [];
  } catch {
    return [];
  }
}

const keeping = () => localStorage.getItem(KEEP) === "1";

/** The earlier queries sent with the session, as the app reads its store: those searched
 * before this session began, oldest first, the last HISTORY_SIZE as the model counts them;
 * null when the person keeps no history. */
function earlier() {
  if (!keeping()) return null;
  const before = stored().filter(([, time]) => time < state.began).map(([query]) => query);
  return counted(before.reverse(), HISTORY_SIZE).reverse();
}

/** The predict request for what is typed: `complete` (or `suggest` when it holds no word),
 * with the history when one is kept and the model reads it. */
function request(typed, session, history) {
  const words = normalise(typed) !== "";
  let name = words ? "complete" : "suggest";
  const inputs = { session: [session.length ? session.slice(-MAX_ROW) : [""]] };
  if (words) inputs.prefix = [typed];
  if (history !== null && state.signatures.has(`${name}_with_history`)) {
    name += "_with_history";
    inputs.history = [history.length ? history.slice(-MAX_ROW) : [""]];
  }
  return { signature_name: name, inputs };
}

/** Ask the model for the list of what is typed now (`key`: when the key that typed it was
 * pressed, null when no key did). One request at a time: one asked while another is on its
 * way waits for its answer, then goes with the text typed by then, so that answers come in
 * the order asked and the server never holds more than one of this page's requests. */
function ask(key = null) {
  clearTimeout(state.timer);
  if (state.asking) {
    state.waiting = { key };
    return;
  }
  state.asking = true;
  const typed = box.value;
  const session = [...state.trail];
  const timing = { seq: ++state.sent, key, sent: performance.now(), typed };
  const body = JSON.stringify(request(typed, session, earlier()));
  const headers = { "Content-Type": "application/json" };
  fetch(`${MODEL}:predict`, { method: "POST", headers, body })
    .then(async (answer) => [answer.status, await answer.text()])
    .catch((error) => [0, String(error)])
    .then(([status, text]) => {
      receive(timing, session, status, text);
      state.asking = false;
      const waiting = state.waiting;
      state.waiting = null;
      if (waiting) ask(waiting.key);
    });
}

function receive(timing, session, status, text) {
  state.drawn = timing.seq;
  timing.answered = performance.now();
  if (status !== 200) return draw([], timing.typed, refusal(status, text));
  const outputs = parse(text).outputs;
  const texts = outputs.suggestions[0];
  const sources = outputs.sources ? outputs.sources[0] : texts.map(() => "");
  const items = texts
    .map((suggestion, i) => ({ text: suggestion, source: sources[i] }))
    .filter((item) => item.text && mayShow(item.text, state.rules));
  const why = items.length ? "" : whyEmpty(session, timing.typed, texts, state.rules);
  draw(items, timing.typed, why);
  timing.drawn = performance.now();
  window.searchPage.timings.push(timing);
}

function refusal(status, text) {
  if (!status) return `The server cannot be reached (${text}).`;
  try {
    return `The server answered HTTP ${status}: ${JSON.parse(text).error}`;
  } catch {
    return `The server answered HTTP ${status}.`;
  }
}

/** How much of `text` is what was typed: shown plain, the completion after it in bold. */
function typedLength(text, typed) {
  let prefix = normalise(typed);
  if (prefix && FINISHED.test(typed)) prefix += " ";
  return prefix && `${text} `.startsWith(prefix) ? Math.min(prefix.length, text.length) : 0;
}

function mark(kind, glyph, said) {
  const span = document.createElement("span");
  span.className = `mark ${kind}`;
  span.textContent = glyph;
  span.title = said;
  span.setAttribute("aria-label", said);
  return span;
}

/** One suggestion as an option of the listbox: text only, never markup. */
function option(item, i, typed) {
  const li = document.createElement("li");
  li.id = `option-${i}`;
  li.setAttribute("role", "option");
  li.setAttribute("aria-selected", "false");
  if (item.source.includes("history")) li.append(mark("history", "↺", "from your history"));
  if (item.source.split("+").includes("fixed")) {
    li.append(mark("fixed", "✎", "corrects a slip in what you typed"));
  }
  const plain = document.createElement("span");
  const bold = document.createElement("b");
  const cut = typedLength(item.text, typed);
  plain.className = "typed";
  plain.textContent = item.text.slice(0, cut);
  bold.textContent = item.text.slice(cut);
  li.append(plain, bold);
  li.addEventListener("mousedown", (event) => {
    event.preventDefault(); // the box keeps the focus
    search(item.text);
  });
  return li;
}

function draw(items, typed, why) {
  state.items = items;
  state.active = -1;
  list.replaceChildren(...items.map((item, i) => option(item, i, typed)));
  $("why").textContent = why;
  if (items.length && !state.closed) open();
  else close();
}

function open() {
  list.hidden = false;
  box.setAttribute("aria-expanded", "true");
}

function close() {
  list.hidden = true;
  box.setAttribute("aria-expanded", "false");
  state.active = -1;
  highlight();
}

function highlight() {
  [...list.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === state.active)));
  if (state.active < 0) box.removeAttribute("aria-activedescendant");
  else {
    box.setAttribute("aria-activedescendant", `option-${state.active}`);
    list.children[state.active].scrollIntoView({ block: "nearest" });
  }
}

/** Move the highlight by `step` through the list and back to the box, opening the list. */
function move(step) {
  const count = state.items.length;
  if (!count) return;
  state.closed = false;
  open();
  state.active = ((state.active + 1 + step + count + 1) % (count + 1)) - 1;
  highlight();
}

/** Search `typed`: it joins the session's trail (and the history, if kept and no secret). */
function search(typed) {
  const query = strip(typed);
  if (!query) return;
  if (!state.trail.length) state.began = Date.now(); // the history read is what came before
  state.trail.push(query);
  keep(typed);
  box.value = "";
  state.closed = false;
  showTrail();
  ask();
}

function keep(typed) {
  const query = keeping() ? kept(typed, state.rules) : null;
  if (query === null) return;
  localStorage.setItem(STORE, JSON.stringify([...stored(), [query, Date.now()]].slice(-MAX_KEPT)));
  showKept();
}

function showTrail() {
  const items = state.trail.map((query) => {
    const li = document.createElement("li");
    li.textContent = query;
    return li;
  });
  $("trail").replaceChildren(...items);
  $("clear").disabled = !items.length;
}

function showKept() {
  $("keep").checked = keeping();
  $("forget").textContent = `Forget my history (${stored().length})`;
}

function onKey(event) {
  const actions = {
    ArrowDown: () => move(1),
    ArrowUp: () => move(-1),
    Enter: () => search(state.active >= 0 ? state.items[state.active].text : box.value),
    Escape: () => {
      state.closed = true;
      close();
    },
  };
  if (!(event.key in actions)) {
    state.pressed = event.timeStamp;
    return;
  }
  event.preventDefault();
  actions[event.key]();
}

function bind() {
  box.addEventListener("keydown", onKey);
  box.addEventListener("input", () => {
    const key = state.pressed;
    state.closed = false;
    clearTimeout(state.timer);
    state.timer = setTimeout(() => ask(key), DEBOUNCE_MS);
  });
  box.addEventListener("blur", () => {
    state.closed = true;
    close();
  });
  box.addEventListener("focus", () => {
    state.closed = false;
    if (state.items.length) open();
  });
  $("clear").addEventListener("click", () => {
    state.trail = [];
    state.began = Date.now();
    showTrail();
    box.focus();
    ask();
  });
  $("keep").addEventListener("change", (event) => {
    localStorage.setItem(KEEP, event.target.checked ? "1" : "0");
    showKept();
    ask();
  });
  $("forget").addEventListener("click", () => {
    localStorage.removeItem(STORE);
    showKept();
    ask();
  });
}

/** The model's signatures, asked again each second while it loads. */
async function signatures() {
  for (;;) {
    try {
      const answer = await fetch(`${MODEL}/metadata`);
      if (answer.ok) return new Set(Object.keys((await answer.json()).metadata.signature_def.signature_def));
      $("why").textContent = refusal(answer.status, await answer.text());
    } catch (error) {
      $("why").textContent = refusal(0, String(error));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function start() {
  state.rules = await safetyRules();
  state.signatures = await signatures();
  bind();
  showTrail();
  showKept();
  box.focus();
  ask();
  window.searchPage.ready = true;
}

start();
