"""The judged typing study of lists while typing: the lists a model shows for the sessions of
studies/typing/sessions.tsv (written before any list was read), and, with the judgments of
studies/typing/judgments.tsv (every item good, generic or junk, read by hand), the share of
each and of the lists holding a good item (clickable). Prints markdown.

Usage: python -m studies.study_typing --model MODEL [--judged NAME]
"""

import argparse
import os
from collections import Counter

STUDY = os.path.join(os.path.dirname(__file__), "typing")
VERDICTS = ("good", "generic", "junk")


def sessions():
    """[(earlier queries, typed)] of sessions.tsv."""
    found = []
    with open(os.path.join(STUDY, "sessions.tsv"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            earlier, typed = line.rstrip("\n").split("\t")
            found.append(([q.strip() for q in earlier.split("|") if q.strip()], typed))
    return found


def judgments(name):
    """{(typed, item): verdict} of the model `name` in judgments.tsv (name TAB typed TAB item
    TAB verdict)."""
    found = {}
    with open(os.path.join(STUDY, "judgments.tsv"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            model, typed, item, verdict = line.rstrip("\n").split("\t")
            if verdict not in VERDICTS:
                raise ValueError(f"judgments.tsv: {verdict!r} is none of {VERDICTS}")
            if model == name:
                found[(typed, item)] = verdict
    return found


def main(argv=None):
    import mtn_keras

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--judged", help="the model's name in judgments.tsv: print the shares")
    args = parser.parse_args(argv)
    model = mtn_keras.load(args.model)
    study = sessions()
    answers = model.complete([s for s, _ in study], [t for _, t in study])
    verdicts = judgments(args.judged) if args.judged else {}
    counts, clickable = Counter(), 0
    for (earlier, typed), answer in zip(study, answers):
        items = [item.text for item in answer]
        print(f"- {' | '.join(earlier) or '(empty)'} / `{typed}`: " + "; ".join(items))
        if args.judged:
            said = [verdicts[(typed, item)] for item in items]
            counts.update(said)
            clickable += "good" in said
    if args.judged:
        total = sum(counts.values())
        shares = ", ".join(f"{v} {100 * counts[v] / total:.0f}%" for v in VERDICTS)
        print(f"\n{total} items: {shares}; {clickable} of {len(study)} lists clickable")


if __name__ == "__main__":
    main()
