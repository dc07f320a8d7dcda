"""A keystroke's model call, the typo-tolerant graph against a reference export, alternately.

Why: issue 46 asks that typo tolerance (one-edit lookups of what was typed, the session's
corrections, the known-words filter) keep a keystroke's `complete` call within 1.25 x the
graph before it. The two exports are loaded in one process and called in turn, one key
each, through the app's own app_model (app/model.py: the call every keystroke of mtn-tui
makes, with the searcher's history), so the machine's noise falls on both alike.

How: after a session of two made-up queries, each of QUERIES is typed key by key, clean and
with a slip of the finger; each prefix is asked of the reference and then of the model (the
order swapped every key). Printed: p50 and p90 of each, and their ratio.

Usage: python benchmarks/bench_typing.py --reference OLD_EXPORT [--model NEW_EXPORT]
           [--rounds 2]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mtn_tui.model import LocalModel  # noqa: E402

SESSION = ["cheap flights to lisbon", "lisbon weather in may"]
QUERIES = ["lisbon old town hotels", "sintra day trip", "porto train times", "fado tickets"]
SLIPPED = ["lsibon old town hotels", "sitnra day trip", "portto train times", "fsdo tickets"]
HISTORY = tuple(f"{q} {n}" for n in range(50) for q in ("weather boston", "cheap hotels"))


def percentile_ms(values, share):
    return 1000 * sorted(values)[min(len(values) - 1, int(share * len(values)))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="the export to compare against")
    parser.add_argument("--model", help="the export measured (default: the bundled model)")
    parser.add_argument("--rounds", type=int, default=2, help="times each query is typed")
    args = parser.parse_args(argv)
    app_models = {"reference": LocalModel(args.reference), "model": LocalModel(args.model)}
    for app_model in app_models.values():  # compile both before timing
        app_model.suggestions(SESSION, "lis", HISTORY)
    seconds = {name: [] for name in app_models}
    turn = 0
    for _ in range(args.rounds):
        for text in QUERIES + SLIPPED:
            for end in range(1, len(text) + 1):
                order = list(app_models) if turn % 2 == 0 else list(reversed(app_models))
                turn += 1
                for name in order:
                    began = time.perf_counter()
                    app_models[name].suggestions(SESSION, text[:end], HISTORY)
                    seconds[name].append(time.perf_counter() - began)
    for name, values in seconds.items():
        print(
            f"{name}: {len(values)} keystrokes, p50 {1000 * statistics.median(values):.1f} ms, "
            f"p90 {percentile_ms(values, 0.9):.1f} ms"
        )
    ratio = statistics.median(seconds["model"]) / statistics.median(seconds["reference"])
    print(f"model / reference, p50: {ratio:.2f}")


if __name__ == "__main__":
    main()
