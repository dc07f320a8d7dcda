"""The search page's time from a key pressed to its list drawn, in the browser, on a warm
`python -m mtn_keras.serve`: one person typing, then 8 typing at once; beside it the server's
own answer time.

Why: a search box is as good as its list is quick; the page is measured where people meet
it (headless Chromium), not only the server behind it.

How: the server of --model on 127.0.0.1 (its page at `/`), warmed with one request of 1, 2, 4
and 8 sessions per signature the page calls (each batch size compiled before the clock
starts). Each person is a headless Chromium of its own (Debian's chromium and chromedriver,
never a download) that types made-up sessions a key every --key-ms, enter after each query,
--pause-ms before the next. The page records, in performance.now() ms, when each key went
down, when its request left (after the page's debounce), when the answer was read and when
the list was drawn (window.searchPage.timings); a key whose list a later key replaced before
it came is not drawn, and counted apart. The server's answer time is its own histogram of
predict requests (GET /monitoring/prometheus/metrics, TensorFlow Serving's buckets, 1.8x
apart): its mean, and the buckets holding its p50 and p90.

Usage: python benchmarks/bench_page.py [--model default] [--people 1,8] [--key-ms 200]
"""

import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_serving import counts_of, model_parser, percentile  # noqa: E402
from serve_load import HOST, free_port, start_server  # noqa: E402

SESSIONS = [
    ["cheap flights", "rome hotels"],
    ["weather boston", "boston red sox"],
    ["pizza hut", "dominos pizza"],
    ["used cars", "honda civic"],
    ["bank of america", "chase bank"],
    ["lyrics", "american idol"],
    ["ebay", "craigslist"],
    ["movie times", "harry potter"],
]
LATENCY = re.compile(r":tensorflow:serving:request_latency_(bucket|sum|count)\{([^}]*)\} (\S+)")
TIMINGS = "return window.searchPage.timings.filter(t => t.key !== null)"


def browser():
    """A headless Chromium driven through the system's chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def person(driver, origin, sessions, key_s, pause_s, found):
    """Type `sessions` into a fresh page, key by key; append (the page's timings of keys, the
    keys pressed) to `found`."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(origin + "/")
    ready = "return window.searchPage && window.searchPage.ready"
    WebDriverWait(driver, 60).until(lambda _: driver.execute_script(ready))
    box, pressed = driver.find_element("id", "query"), 0
    for session in sessions:
        for query in session:
            for key in query:
                box.send_keys(key)
                pressed += 1
                time.sleep(key_s)
            box.send_keys(Keys.ENTER)
            time.sleep(pause_s)
        driver.find_element("id", "clear").click()
    time.sleep(1)  # the last answers
    found.append((driver.execute_script(TIMINGS), pressed))


def server_latency(metrics_url):
    """(requests, seconds in all, {bucket bound in s: requests at most that long}) so far."""
    import httpx

    count, total, buckets = 0, 0.0, {}
    for kind, labels, value in LATENCY.findall(httpx.get(metrics_url).text):
        if kind == "bucket":
            bound = float(re.search(r'le="([^"]+)"', labels).group(1)) / 1e6
            buckets[bound] = buckets.get(bound, 0) + float(value)
        elif kind == "sum":
            total += float(value) / 1e6
        else:
            count += int(float(value))
    return count, total, buckets


def bucket_of(before, after, share):
    """The histogram bucket (low, high] in ms holding the `share` quantile of the requests
    between two readings."""
    count = after[0] - before[0]
    bounds = sorted(after[2])
    low = 0.0
    for bound in bounds:
        if after[2][bound] - before[2].get(bound, 0) >= share * count:
            return f"{low * 1000:.0f}-{bound * 1000:.0f}"
        low = bound
    return f">{low * 1000:.0f}"


def warm(url):
    """One request of 1, 2, 4 and 8 sessions for each signature the page calls."""
    import httpx

    for name in ("suggest", "complete"):
        for size in (1, 2, 4, 8):
            inputs = {"session": [["weather boston"]] * size}
            if name == "complete":
                inputs["prefix"] = ["wea"] * size
            body = {"signature_name": name, "inputs": inputs}
            httpx.post(url + ":predict", json=body, timeout=600).raise_for_status()


def load(drivers, origin, args, metrics_url):
    """One line of figures for len(drivers) people typing at once."""
    before, found = server_latency(metrics_url), []
    threads = [
        threading.Thread(
            target=person,
            args=(driver, origin, SESSIONS[i:] + SESSIONS[:i], args.key_ms / 1000, 0.5, found),
        )
        for i, driver in enumerate(drivers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    after = server_latency(metrics_url)
    timings = [timing for page, _ in found for timing in page]
    drawn = [t["drawn"] - t["key"] for t in timings]
    trip = [t["answered"] - t["sent"] for t in timings]
    keys = sum(pressed for _, pressed in found)
    requests = after[0] - before[0]
    mean = (after[1] - before[1]) / max(requests, 1) * 1000
    return (
        f"{len(drivers)} typing: key to list drawn p50 {percentile(drawn, 0.5):.0f} ms, "
        f"p90 {percentile(drawn, 0.9):.0f} ms ({len(drawn)} lists for {keys} keys); "
        f"request to answer in the page p50 {percentile(trip, 0.5):.0f} ms, "
        f"p90 {percentile(trip, 0.9):.0f} ms; the server's own: mean {mean:.0f} ms, "
        f"p50 in {bucket_of(before, after, 0.5)} ms, p90 in {bucket_of(before, after, 0.9)} ms "
        f"({requests} requests)"
    )


def main(argv=None):
    parser = model_parser(__doc__, ("--people", "1,8", "people typing at once, one count a load"))
    parser.add_argument("--key-ms", type=float, default=200, help="between two keys")
    args = parser.parse_args(argv)
    loads = counts_of(parser, "--people", args.people)
    port = free_port()
    server = start_server(args.model, port)
    origin = f"http://{HOST}:{port}"
    try:
        warm(origin + "/v1/models/mtn")
        for people in loads:
            drivers = [browser() for _ in range(people)]
            try:
                print(load(drivers, origin, args, origin + "/monitoring/prometheus/metrics"))
            finally:
                for driver in drivers:
                    driver.quit()
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
