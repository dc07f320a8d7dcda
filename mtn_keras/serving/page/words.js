// The text rules the page shares with the Python clients and the app, ported line for line:
// normalise (mtn_keras/data/text.py), why a list is empty (mtn_keras/client/reasons.py),
// the safety rule (mtn_keras/data/safety.py, its patterns read from the server) and which
// earlier queries a model reads (app/history/store.py's `counted`).

// Python's whitespace (str.isspace, and `\s` of its regular expressions), which JavaScript's
// `\s` does not quite match.
export const SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const ENDS = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, "g");
const RUNS = new RegExp(`[${SPACE}]+`);
const SEPARATOR = /[\p{P}\p{S}\p{C}\p{Z}]/u;

/** `text` without whitespace at its ends, as Python's str.strip(). */
export function strip(text) {
  return text.replace(ENDS, "");
}

/** `text`'s words between whitespace, as Python's str.split(). */
export function split(text) {
  return text.split(RUNS).filter(Boolean);
}

/** The query lowercased, punctuation, symbols and controls to spaces, spaces collapsed. */
export function normalise(query) {
  let out = "";
  for (const char of query) out += SEPARATOR.test(char) ? " " : char.toLowerCase();
  return out.split(" ").filter(Boolean).join(" ");
}

/** The safety rule's patterns, read once from the server (/page/safety.json). */
export async function safetyRules() {
  const answer = await fetch("/page/safety.json");
  const cores = await answer.json();
  return {
    innocent: new RegExp(cores.innocent, "g"),
    information: new RegExp(cores.information, "g"),
    child: new RegExp(cores.child),
    explicit: new RegExp(cores.explicit),
  };
}

function without(text, phrases) {
  return text.replace(phrases, "  ").replace(phrases, "  ");
}

/** Whether the normalised `query` seeks sexual content involving minors. */
export function childUnsafe(query, rules) {
  return rules.child.test(without(` ${query} `, rules.innocent));
}

/** Whether a suggestion may be shown: never an explicit one (the clients' own check). */
export function mayShow(text, rules) {
  const read = without(` ${normalise(text)} `, rules.innocent);
  return !rules.child.test(read) && !rules.explicit.test(without(read, rules.information));
}

function withheld(texts, rules) {
  const unsafe = texts.map((text) => childUnsafe(normalise(text), rules));
  let kind = unsafe.some(Boolean) ? "sexually explicit or unsafe" : "sexually explicit";
  kind = unsafe.every(Boolean) ? "unsafe" : kind;
  if (texts.length === 1) return `the model's one suggestion was withheld as ${kind}`;
  return `the model's ${texts.length} suggestions were all withheld as ${kind}`;
}

/** Why no suggestion is shown for `session` and the typed `prefix`, most specific reason
 * first; `answered`: the model's texts ("" for an empty slot, the others withheld). */
export function whyEmpty(session, prefix, answered, rules) {
  const typed = strip(prefix);
  const words = normalise(prefix);
  const held = answered.filter(Boolean);
  let reason;
  if (held.length) reason = withheld(held, rules);
  else if (words) return `No known query starts like “${typed}”.`;
  else if (session.some((query) => normalise(query))) {
    reason = "nothing the model was confident enough of passed its filters";
  } else if (typed) reason = "the session holds no query with words";
  else return "The session holds no query with words and nothing was typed.";
  if (typed && !words) {
    reason = `“${typed}” holds no word, so it is read as nothing typed, and ${reason}`;
  }
  return reason[0].toUpperCase() + reason.slice(1) + ".";
}

/** The queries of `newestFirst` up to the `size`-th as the model counts them: a query
 * repeated right after itself counts once, one without words not at all. */
export function counted(newestFirst, size) {
  const taken = [];
  let count = 0;
  let previous = null;
  for (const query of newestFirst) {
    const text = normalise(query);
    if (text && text !== previous) {
      if (count === size) break;
      count += 1;
      previous = text;
    }
    taken.push(query);
  }
  return count ? taken : [];
}
