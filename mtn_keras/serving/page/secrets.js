// Whether a typed query holds a secret, so that the page's history never keeps it: the rules
// of the app's filter (app/history/secrets.py and filter.py's `kept`), ported line for line,
// Python's Unicode `\d`, `\w` and `\s` spelt out; tests/web checks that both agree.
import { SPACE, childUnsafe, normalise, split, strip } from "./words.js";

const PASSWORD_WORDS = new Set("password passwd passwort pwd passcode passphrase passwords".split(" "));
const SHORT_PASSWORD_WORDS = new Set(["pass", "pw", "pword", "psw"]);
const VALUE_WORDS = new Map(Object.entries({
  pin: 4, ssn: 9, social: 9, cvv: 3, cvc: 3, cvv2: 3, secret: 1, token: 1,
  apikey: 1, accesskey: 1, account: 6, acct: 6, routing: 9, passcode: 1,
}));
const FILLERS = new Set(("is was = : - code number num no # key for to of my the a on at in new " +
  "old and are").split(" "));
const COMMON_AFTER = new Set(("reset recovery recover forgot forgotten change changer changed " +
  "manager managers generator requirements help protect protected protection strength checker " +
  "hint hints expired policy security safe keeper vault app apps cracker crack hack list lists " +
  "ideas tips examples not incorrect wrong invalid required needed locked lost reminder " +
  "retrieval retrieve remover removal remove reveal finder unlock bypass page site sites box " +
  "field case sensitive too weak strong length rules game games with by from or if how what " +
  "where windows xp user username file files word excel pdf zip shareware software program " +
  "programs tool tools free download downloads").split(" "));
const SERVICES = new Set(("email e-mail mail gmail yahoo aol hotmail myspace bank wifi router " +
  "account accounts computer laptop phone netflix ebay paypal chase amazon facebook admin root " +
  "login").split(" "));
const D = "\\p{Nd}";
const W = "\\p{L}\\p{N}_";
const CARD = new RegExp(`(?<!${D})${D}(?:[ .\\-]{0,2}${D}){12,18}(?!${D})`, "gu");
const SSN = new RegExp(`(?<![${D}-])(${D}{3})[- ]?(${D}{2})[- ]?(${D}{4})(?![${D}-])`, "gu");
const IBAN = new RegExp(
  `(?<![${W}])([a-z]{2}${D}{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?)(?![${W}])`, "giu");
const CREDENTIAL = new RegExp(
  `(?<![${W}.+-])[${W}.+-]+@[${W}-]+(?:\\.[${W}-]+)+:[^${SPACE}]` +
  `|(?<![${W}])[${W}]+:\\/\\/[^/${SPACE}:@]+:[^/${SPACE}@]+@`, "u");
const PRIVATE_KEY = /BEGIN (?:[A-Z]+ ){0,3}PRIVATE KEY/iu;
const KEY_LIKE = /[A-Za-z0-9_\-+/=]{20,}/g;
const DIGIT = new RegExp(D, "u");
const NOT_DIGITS = new RegExp(`[^${D}]`, "gu");
const SYMBOL = new RegExp(`[${D}@#$%^&*+/\\\\|~!]`, "u");
const QUOTES = /^[.,;!?"'()]+|[.,;!?"'()]+$/g;
const LEADING = new RegExp(`^[${SPACE}]`);
const MAX_CHARS = 2048; // longer than anyone types: judged a secret, unread

/** The value of a decimal digit of any script: digits come in runs of ten from zero. */
function digitValue(char) {
  let code = char.codePointAt(0);
  let value = 0;
  while (DIGIT.test(String.fromCodePoint(code - 1))) [code, value] = [code - 1, value + 1];
  return value % 10;
}

function luhn(digits) {
  let total = 0;
  [...digits].reverse().forEach((char, i) => {
    const digit = digitValue(char);
    total += i % 2 === 0 ? digit : digit > 4 ? digit * 2 - 9 : digit * 2;
  });
  return total % 10 === 0;
}

function ibanValid(text) {
  const code = [...text.replaceAll(" ", "").toUpperCase()];
  const moved = [...code.slice(4), ...code.slice(0, 4)];
  const digits = moved.map((char) => String(DIGIT.test(char) ? digitValue(char) : parseInt(char, 36)));
  const rest = [...digits.join("")].reduce((left, digit) => (left * 10 + Number(digit)) % 97, 0);
  return code.length >= 15 && rest === 1;
}

function ssnLike(area, group, serial) {
  return area !== "000" && area !== "666" && area[0] !== "9" && group !== "00" && serial !== "0000";
}

function tokens(query) {
  return split(query.replace(/([:=])/g, " $1 ").toLowerCase());
}

function value(words, start) {
  for (const token of words.slice(start, start + 5)) {
    const word = token.replace(QUOTES, "");
    if (word && !FILLERS.has(word) && !SERVICES.has(word)) return word;
  }
  return "";
}

function passwordValue(word) {
  return Boolean(word) && (SYMBOL.test(word) || [...word].length >= 20 || !COMMON_AFTER.has(word));
}

function keywordSecret(query) {
  let joined = tokens(query).join(" ");
  for (const keyword of ["pass word", "api key", "access key"]) {
    joined = joined.replaceAll(keyword, keyword.replace(" ", ""));
  }
  const words = split(joined);
  for (const [i, token] of words.entries()) {
    const after = i + 1 < words.length ? words[i + 1] : "";
    if (PASSWORD_WORDS.has(token) && passwordValue(value(words, i + 1))) return true;
    if (SHORT_PASSWORD_WORDS.has(token) && (after === ":" || after === "=")) {
      if (passwordValue(value(words, i + 2))) return true;
    }
    if (VALUE_WORDS.has(token)) {
      const digits = [...value(words, i + 1).replace(NOT_DIGITS, "")];
      if (digits.length && digits.length >= VALUE_WORDS.get(token)) return true;
    }
  }
  return false;
}

function numbersSecret(query) {
  for (const run of query.matchAll(CARD)) {
    const digits = [...run[0].replace(NOT_DIGITS, "")];
    if (digits.length >= 13 && digits.length <= 19 && luhn(digits)) return true;
  }
  if ([...query.matchAll(IBAN)].some((found) => ibanValid(found[1]))) return true;
  return [...query.matchAll(SSN)].some((found) => ssnLike(found[1], found[2], found[3]));
}

/** Whether `query` holds a secret by the app's checks, in time linear in its length. */
export function holdsSecret(query) {
  if (CREDENTIAL.test(query) || PRIVATE_KEY.test(query)) return true;
  if (keywordSecret(query) || numbersSecret(query)) return true;
  return (query.match(KEY_LIKE) || []).some((token) => /\d/.test(token) && /[A-Za-z]/.test(token));
}

/** Whether `query` looks like it holds a secret; one longer than MAX_CHARS is taken as one. */
export function looksSecret(query) {
  return [...query].length > MAX_CHARS || holdsSecret(query);
}

/** `typed` as the history stores it, or null: blank, typed with a leading space, a secret, or
 * one that seeks sexual content involving minors. */
export function kept(typed, rules) {
  const query = strip(typed);
  if (!query || LEADING.test(typed)) return null;
  return looksSecret(query) || childUnsafe(normalise(query), rules) ? null : query;
}
