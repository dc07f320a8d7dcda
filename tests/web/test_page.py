"""The search page in a real browser (headless Chromium): a session typed key by key, its list
checked at each key, moved through and taken with the keyboard, the trail, the why of an
empty list, a hostile query shown as text, answers drawn in the order asked, the history kept only
when asked and never a secret, and no request to any address but the page's server. Checks
wait for outcomes (60 s at most), never for a speed."""

import json
import urllib.request

import pytest
from chromium_driver import ROOT, WAIT_S, WINDOW

from mtn_keras.data.text import completes, normalise

pytestmark = pytest.mark.slow
SCREENSHOT = ROOT / "docs" / "images" / "search-page.png"
SETTLED = """const s = window.searchPage.state, t = window.searchPage.timings.at(-1);
return s.drawn === s.sent && !!t && t.seq === s.drawn
  && t.typed === document.getElementById("query").value;"""


def wait(browser, script, *args):
    """The first truthy value of `script` (JavaScript, run again until it is one)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, WAIT_S, 0.05).until(
        lambda _: browser.execute_script(script, *args)
    )


def fresh(browser, origin):
    """The page, loaded anew with an empty browser storage, ready for keys."""
    browser.get(origin + "/")
    browser.execute_script("localStorage.clear()")
    browser.get(origin + "/")
    wait(browser, "return window.searchPage && window.searchPage.ready")
    wait(browser, SETTLED)
    return browser.find_element("id", "query")


def shown(browser):
    """The list as drawn: (its texts, the plain part of each, its sources' marks)."""
    return browser.execute_script(
        """return [...document.querySelectorAll('#suggestions li')].map(li => [
          li.querySelector('.typed').textContent + li.querySelector('b').textContent,
          li.querySelector('.typed').textContent,
          [...li.querySelectorAll('.mark')].map(m => m.classList[1])])"""
    )


def typed_key_by_key(browser, box, text):
    """Type `text` a key at a time, each key's list checked once drawn: every suggestion
    completes what was typed (or corrects one slip of it, marked), what was typed in plain."""
    for key in text:
        box.send_keys(key)
        wait(browser, SETTLED)
        prefix = normalise(box.get_attribute("value"))
        prefix += " " if box.get_attribute("value")[-1:] in " -" else ""
        for suggestion, plain, marks in shown(browser):
            assert "fixed" in marks or completes(suggestion, prefix), (prefix, suggestion)
            assert "fixed" in marks or plain == prefix[: len(suggestion)]


def test_a_session_typed_key_by_key_moved_through_and_taken(browser, origin):
    from selenium.webdriver.common.keys import Keys

    box = fresh(browser, origin)
    typed_key_by_key(browser, box, "cheap flights")
    texts = [text for text, _, _ in shown(browser)]
    assert texts and box.get_attribute("aria-expanded") == "true"
    assert box.get_attribute("role") == "combobox" and box.get_attribute("aria-controls") == (
        "suggestions"
    )
    assert browser.find_element("id", "suggestions").get_attribute("role") == "listbox"
    box.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ARROW_UP)
    assert box.get_attribute("aria-activedescendant") == "option-0"
    chosen = browser.find_element("id", "option-0")
    assert chosen.get_attribute("aria-selected") == "true" and chosen.text.endswith(texts[0])
    box.send_keys(Keys.ENTER)
    wait(browser, SETTLED)
    trail = [li.text for li in browser.find_elements("css selector", "#trail li")]
    assert trail == [texts[0]] and box.get_attribute("value") == ""
    assert browser.execute_script("return window.searchPage.timings.at(-1).typed") == ""
    typed_key_by_key(browser, box, "rome ")
    box.send_keys(Keys.ESCAPE)
    assert box.get_attribute("aria-expanded") == "false"
    assert not browser.find_element("id", "suggestions").is_displayed()
    assert box.get_attribute("aria-activedescendant") is None
    box.send_keys("hotels", Keys.ENTER)
    wait(browser, SETTLED)
    trail = [li.text for li in browser.find_elements("css selector", "#trail li")]
    assert trail == [texts[0], "rome hotels"]
    browser.find_element("id", "clear").click()
    wait(browser, SETTLED)
    assert browser.find_elements("css selector", "#trail li") == []


def test_the_why_of_an_empty_list_is_shown(browser, origin):
    box = fresh(browser, origin)
    why = browser.find_element("id", "why")
    assert why.text == "The session holds no query with words and nothing was typed."
    box.send_keys("zzzzqqq")
    wait(browser, SETTLED)
    assert why.text == "No known query starts like “zzzzqqq”."
    assert box.get_attribute("aria-expanded") == "false"


HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
FAKED = """const real = window.fetch, hostile = arguments[0];
window.fetch = (url, init) => String(url).endsWith(':predict')
  ? Promise.resolve(new Response(JSON.stringify({outputs: {suggestions: [[hostile, '']],
      scores: [[0.5, -1]], sources: [['log', '']]}}).replace('-1', '-Infinity')))
  : real(url, init);"""


def test_a_hostile_query_is_shown_as_text(browser, origin):
    from selenium.webdriver.common.keys import Keys

    box = fresh(browser, origin)
    box.send_keys(HOSTILE, Keys.ENTER)
    wait(browser, SETTLED)
    assert [li.text for li in browser.find_elements("css selector", "#trail li")] == [HOSTILE]
    browser.execute_script(FAKED, HOSTILE)  # the server answers it as a suggestion
    box.send_keys("<")
    wait(browser, SETTLED)
    assert [text for text, _, _ in shown(browser)] == [HOSTILE]
    injected = "return document.querySelectorAll('main img, main script').length"
    assert browser.execute_script(injected) == 0
    assert browser.execute_script("return window.pwned") is None


DELAYED = """const real = window.fetch;
let held = false;
window.fetch = (url, init) => {
  const answer = real(url, init);
  if (!String(url).endsWith(':predict') || held) return answer;
  held = true;
  return answer.then(r => new Promise(done => setTimeout(() => done(r), 1500)));
};"""


def test_answers_are_drawn_in_the_order_asked_a_late_one_holding_the_next(browser, origin):
    box = fresh(browser, origin)
    browser.execute_script(DELAYED)  # the next answer comes 1.5 s late
    sent = browser.execute_script("return window.searchPage.state.sent")
    box.send_keys("w")
    wait(browser, "return window.searchPage.state.sent === arguments[0]", sent + 1)
    box.send_keys("e")
    wait(browser, SETTLED)
    timings = browser.execute_script("return window.searchPage.timings.slice(-2)")
    assert [(t["seq"], t["typed"]) for t in timings] == [(sent + 1, "w"), (sent + 2, "we")]
    assert timings[1]["sent"] >= timings[0]["drawn"]  # asked once the late one was drawn
    assert all(text.startswith("we") for text, _, _ in shown(browser))


def test_the_history_is_kept_only_when_asked_never_a_secret(browser, origin):
    from selenium.webdriver.common.keys import Keys

    box = fresh(browser, origin)
    box.send_keys("seattle weather", Keys.ENTER)
    assert browser.execute_script("return localStorage.getItem('mtn-keras.history')") is None
    box.send_keys(Keys.ESCAPE)  # the list closes, uncovering what lies below it
    browser.find_element("id", "keep").click()
    for query in ("password hunter2", "4111 1111 1111 1111", " private thing", "boston hotels"):
        box.send_keys(query, Keys.ENTER)
    kept = json.loads(browser.execute_script("return localStorage.getItem('mtn-keras.history')"))
    assert [query for query, _ in kept] == ["boston hotels"]
    bodies = "window.bodies = []; const real = window.fetch; window.fetch = (url, init) => {"
    bodies += "window.bodies.push(init && init.body); return real(url, init); };"
    browser.execute_script(bodies)
    browser.find_element("id", "clear").click()  # a new session: the history is what came before
    wait(browser, SETTLED)
    asked = json.loads(browser.execute_script("return window.bodies.at(-1)"))
    assert asked["signature_name"] == "suggest_with_history"
    assert asked["inputs"]["history"] == [["boston hotels"]]
    box.send_keys(Keys.ESCAPE)
    browser.find_element("id", "forget").click()
    assert browser.execute_script("return localStorage.getItem('mtn-keras.history')") is None


def test_no_request_leaves_the_pages_server(browser, origin):
    box = fresh(browser, origin)
    box.send_keys("pizza")
    wait(browser, SETTLED)
    names = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert names and all(name.startswith(origin + "/") for name in names), names
    other = origin.replace("127.0.0.1", "localhost") + "/v1/models/default"
    violated = browser.execute_async_script(
        """const done = arguments[1];
        document.addEventListener('securitypolicyviolation', e => done(e.effectiveDirective));
        fetch(arguments[0]).catch(() => {});""",
        other,
    )
    assert violated == "connect-src"
    with urllib.request.urlopen(origin + "/") as answer:
        csp = answer.headers["Content-Security-Policy"]
    assert "connect-src 'self';" in csp and "script-src 'self';" in csp


def test_the_readme_shows_the_page_as_it_is(browser, origin, tmp_path):
    """The screenshot in the README, taken here after a short session: the committed one has
    this one's size (UPDATE_SCREENSHOT=1 writes this one there)."""
    import os
    import shutil
    import struct

    from selenium.webdriver.common.keys import Keys

    box = fresh(browser, origin)
    for query in ("cheap flights", "rome hotels"):
        box.send_keys(query, Keys.ENTER)
    typed_key_by_key(browser, box, "rome ")
    taken = tmp_path / "search-page.png"
    browser.save_screenshot(str(taken))
    if os.environ.get("UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(taken, SCREENSHOT)
    size = [struct.unpack(">II", path.read_bytes()[16:24]) for path in (taken, SCREENSHOT)]
    assert size[0] == size[1] == WINDOW
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/images/search-page.png)" in readme and "cheap flights, rome hotels" in readme
