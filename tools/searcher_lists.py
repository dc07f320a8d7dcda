"""Reads lists as a searcher would: sixteen sessions typed by a made-up person whose history
is tests/fixtures/made-up-history.tsv (the app's export format), each answered with and
without that history by a SavedModel; prints a markdown table.

Usage: python -m tools.searcher_lists [--model saved_models/default/savedmodel]
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
    """Each session's suggestions and sources (complete_with_history, nothing typed)."""
    import tensorflow as tf

    width = max(len(s) for s in sessions)
    padded = [[""] * (width - len(s)) + s for s in sessions]
    out = model.signatures["complete_with_history"](
        session=tf.constant(padded),
        prefix=tf.constant([""] * len(sessions)),
        history=tf.constant([history] * len(sessions), shape=[len(sessions), len(history)]),
    )
    rows = zip(out["suggestions"].numpy(), out["sources"].numpy())
    return [
        [(t.decode(), s.decode()) for t, s in zip(texts, sources) if t] for texts, sources in rows
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="saved_models/default/savedmodel")
    args = parser.parse_args(argv)
    import tensorflow as tf

    model = tf.saved_model.load(args.model)
    history = made_up_history()
    mine, plain = lists(model, SESSIONS, history), lists(model, SESSIONS, [""])
    print("| session | with the history (↺: from it) | without |")
    print("| --- | --- | --- |")
    for session, found, without in zip(SESSIONS, mine, plain):
        shown = ", ".join(t + (" ↺" if "history" in s else "") for t, s in found)
        print(f"| {' > '.join(session)} | {shown} | {', '.join(t for t, _ in without)} |")


if __name__ == "__main__":
    main()
