"""Reads lists as a searcher would: sixteen sessions typed by a made-up person whose history
is tests/fixtures/made-up-history.tsv (the app's export format), each answered with and
without that history by a SavedModel; prints a markdown table.

Usage: python -m studies.searcher_lists [--model saved_models/default/savedmodel]
"""

import argparse
from pathlib import Path

HISTORY = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "made-up-history.tsv"
# Ten sessions that share nothing with that person's past, six that continue it.
SESSIONS = [
    ["britney spears", "britney spears pictures"],
    ["american idol", "american idol results"],
    ["bank of america", "bank of america online banking"],
    ["nfl scores", "nfl standings"],
    ["cheap flights to orlando", "orlando hotels"],
    ["headache and fever", "flu symptoms"],
    ["chocolate chip cookie recipe", "sugar cookie recipe"],
    ["home depot", "lowes"],
    ["myspace", "myspace layouts"],
    ["weather", "weather channel"],
    ["seattle weather"],
    ["mariners", "mariners tickets"],
    ["vegan recipes", "vegan lasagna"],
    ["used cars", "used subaru outback"],
    ["hiking trails washington"],
    ["portland oregon", "portland hotels"],
]
UNRELATED = 10  # the first ten


def made_up_history():
    """The made-up person's earlier queries, oldest first."""
    return [line.split("\t")[0] for line in HISTORY.read_text().splitlines() if line]


def lists(model, sessions, history):
    """Each session's suggestions and sources, nothing typed, by `model` (a client of
    mtn_keras.load) with `history` (None: without one)."""
    histories = None if history is None else [history] * len(sessions)
    return [[(s.text, s.source) for s in answer] for answer in model.suggest(sessions, histories)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="saved_models/default/savedmodel")
    args = parser.parse_args(argv)
    import mtn_keras

    model = mtn_keras.load(args.model)
    history = made_up_history()
    mine, plain = lists(model, SESSIONS, history), lists(model, SESSIONS, None)
    print("| session | with the history (↺: from it) | without |")
    print("| --- | --- | --- |")
    for session, found, without in zip(SESSIONS, mine, plain):
        shown = ", ".join(t + (" ↺" if "history" in s else "") for t, s in found)
        print(f"| {' > '.join(session)} | {shown} | {', '.join(t for t, _ in without)} |")


if __name__ == "__main__":
    main()
