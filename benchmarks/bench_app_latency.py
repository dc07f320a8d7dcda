"""Keystroke to updated suggestions in mtn-tui, typed at a person's pace, with a real model.

Why: suggestions are shown while the user types (issue 12, item 6: a median of at most
100 ms from a keystroke to suggestions that take it into account, with no pile-up of stale
requests). The app asks the model at once on each keystroke, one call at a time; keys
typed while a call runs are asked for together when it returns.

How: the app runs headless (Textual's Pilot) on the model; after a session of two
made-up queries, QUERIES are typed key by key, one key every --pace seconds, and each is
added with enter at the same pace (the last key's call may still run). A keystroke's
latency runs from the moment the key is sent to the moment the list shows suggestions for
the text typed with that key or after it (a call can answer several keys at once); an
enter's, to the list for the new session (issue 25: the finished query's list is cleared
at once, and the new one follows). Also printed: the model calls per keystroke (at most 1:
no pile-up) and the model's own time per call. The app's history store is a temporary one
holding --history earlier queries (never the user's own), and the time to read the last
ones from it, cold and cached, is printed too.

Usage: python benchmarks/bench_app_latency.py [--model PATH] [--pace 0.15] [--history 10000]
"""

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from textual import events

# `python benchmarks/bench_app_latency.py` puts benchmarks/ first on the path; the app's
# modules (`app/`, imported as mtn_tui, its installed name) live in the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mtn_tui.history.opening import open_store  # noqa: E402
from mtn_tui.pilot import settle  # noqa: E402
from mtn_tui.tui import MtnApp  # noqa: E402
from mtn_tui.widgets.query_input import typed_prefix  # noqa: E402

SESSION = ["cheap flights to lisbon", "lisbon weather in may"]
QUERIES = [
    "lisbon old town hotels",
    "tram 28 lisbon",
    "best pastel de nata",
    "sintra day trip",
    "porto train times",
    "douro valley wine tour",
    "algarve beaches",
    "fado show tickets",
]


def median_ms(values):
    return f"{1000 * statistics.median(values):.0f} ms"


def percentile_ms(values, share):
    return f"{1000 * sorted(values)[min(len(values) - 1, int(share * len(values)))]:.0f} ms"


async def measure(pilot, pace):
    """Per keystroke and per enter latencies (s), model calls, the model's seconds per call
    and the median gap between keys."""
    app = pilot.app
    shown = []  # (time, (session, prefix)) of each suggestion list shown
    app.watch(
        app.main_screen,
        "suggestions",
        lambda result: (
            result and shown.append((time.perf_counter(), (result.session, result.prefix)))
        ),
        init=False,
    )
    calls = []  # the seconds of each call for typed words
    suggestions = app.model.suggestions

    def timed_suggestions(session, prefix, history):
        start = time.perf_counter()
        result = suggestions(session, prefix, history)
        calls.append(time.perf_counter() - start)
        return result

    app.model.suggestions = timed_suggestions
    query = app.query_one("#query")
    for text in SESSION:
        query.insert_text_at_cursor(text)
        await pilot.press("enter")
        await settle(pilot)
    keys = []  # (time sent, index of the query typed, (session, prefix) after the key)
    enters = []  # (time sent, the session it makes)
    for number, text in enumerate(QUERIES):
        for end in range(1, len(text) + 1):
            sent = time.perf_counter()
            # as a terminal delivers a key: into the input's queue, without waiting for it
            query.post_message(events.Key(text[end - 1], text[end - 1]))
            keys.append((sent, number, (app.main_screen.session, typed_prefix(text[:end]))))
            await asyncio.sleep(max(0.0, sent + pace - time.perf_counter()))
        enters.append((time.perf_counter(), (*app.main_screen.session, text)))
        await pilot.press("enter")  # at the typing pace: the last key's call may still run
        await settle(pilot)
    latencies = []
    for index, (sent, number, _) in enumerate(keys):
        # the later prefixes of the same query: a list for any of them answers this key
        answers = {wanted for _, n, wanted in keys[index:] if n == number}
        done = next((at for at, wanted in shown if at >= sent and wanted in answers), None)
        if done is not None:
            latencies.append(done - sent)
    entered = [
        next(at for at, wanted in shown if at >= sent and wanted == (session, "")) - sent
        for sent, session in enters
    ]
    gaps = [
        later[0] - earlier[0] for earlier, later in zip(keys, keys[1:]) if later[1] == earlier[1]
    ]
    return latencies, entered, len(keys), calls, statistics.median(gaps)


def seeded_store(folder: Path, count: int) -> tuple[Path, float, float]:
    """A store in `folder` holding `count` earlier queries a minute apart, and the seconds
    reading its last 200 takes: the first time, and then from the cache (per keystroke)."""
    path = folder / "history.db"
    store, _ = open_store(path)
    start = time.time() - 60 * count - 3600
    store.add_many([(f"{QUERIES[n % len(QUERIES)]} {n}", start + 60 * n) for n in range(count)])
    began = time.perf_counter()
    store.recent(200, before=time.time())
    cold = time.perf_counter() - began
    before = time.time()
    began = time.perf_counter()
    for _ in range(1000):
        store.recent(200, before=before)
    cached = (time.perf_counter() - began) / 1000
    store.close()
    return path, cold, cached


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a SavedModel (default: the bundled model)")
    parser.add_argument("--pace", type=float, default=0.15, help="seconds between keys")
    parser.add_argument("--history", type=int, default=10_000, help="stored earlier queries")
    args = parser.parse_args(argv)
    folder = tempfile.TemporaryDirectory()
    store, cold, cached = seeded_store(Path(folder.name), args.history)
    app = MtnApp(args.model, history_path=store)
    result = {}

    async def run(pilot):
        await settle(pilot, timeout=900)
        result["started"] = pilot.app.sub_title
        if pilot.app.model is not None:
            result["started"] += "; " + ", ".join(
                f"{step} {took:.1f} s" for step, took in pilot.app.model.start_seconds.items()
            )
        if pilot.app.model is not None:
            result["measured"] = await measure(pilot, args.pace)
        pilot.app.exit()

    app.run(headless=True, size=(160, 48), auto_pilot=run)
    if "measured" not in result:
        raise SystemExit(f"No model: {result['started']}")
    latencies, entered, keys, calls, gap = result["measured"]
    print(f"model: {result['started']}")
    print(f"keystrokes {keys}, one per {gap:.3f} s (median); answered {len(latencies)}")
    print(
        f"keystroke to suggestions: median {median_ms(latencies)}, "
        f"p90 {percentile_ms(latencies, 0.9)}, max {percentile_ms(latencies, 1.0)}"
    )
    print(
        f"enter to the new session's suggestions ({len(entered)}): median {median_ms(entered)}, "
        f"p90 {percentile_ms(entered, 0.9)}, max {percentile_ms(entered, 1.0)}"
    )
    print(
        f"model calls {len(calls)} ({len(calls) / keys:.2f} per keystroke), "
        f"median {median_ms(calls)} each"
    )
    print(
        f"history of {args.history} queries: the last 200 read in {1000 * cold:.1f} ms, "
        f"{1e6 * cached:.0f} µs per keystroke from the cache"
        + ("" if app.model.has_history else " (this model does not read history)")
    )
    folder.cleanup()


if __name__ == "__main__":
    main()
