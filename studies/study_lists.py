"""The judged study of the lists: a model's lists for the 40 sessions of
studies/lists/sessions.tsv, with nothing typed and while typing, without and with the made-up
person's history; and, given the judgments (studies/lists/judgments.tsv), the share of good,
generic and junk items and of clickable lists. Prints markdown.

Usage: python -m studies.study_lists [--model saved_models/default/savedmodel] [--judge]
"""

import argparse

from studies.searcher_lists import made_up_history
from studies.study_sessions import STUDY, judgments

KINDS = ("nothing typed", "nothing typed, with history", "typing", "typing, with history")


def study_lists(model):
    """{(session index, kind): [(text, source)]} for every session and list kind."""
    import mtn_keras

    suggester = mtn_keras.load(model)
    history = made_up_history()
    sessions = [session for session, _ in STUDY]
    typed = [prefix for _, prefix in STUDY]
    found = {}
    for kind in KINDS:
        prefixes = typed if kind.startswith("typing") else ""
        earlier = [history] * len(sessions) if "history" in kind else None
        answers = suggester.complete(sessions, prefixes, earlier)
        for i, answer in enumerate(answers):
            found[i, kind] = [(s.text, s.source) for s in answer]
    return found


def shares(found, judged):
    """Per list kind group (nothing typed / typing): the % of items judged good, generic and
    junk, and the % of lists holding a good item (clickable), from `judged` {(session
    index, text): "good" | "generic" | "junk"}."""
    table = {}
    for group in ("nothing typed", "typing"):
        labels, clickable, lists = [], 0, 0
        for (i, kind), items in found.items():
            if not kind.startswith(group):
                continue
            marks = [judged[i, text] for text, _ in items]
            labels += marks
            lists += 1
            clickable += "good" in marks
        table[group] = {
            label: 100 * labels.count(label) / max(len(labels), 1)
            for label in ("good", "generic", "junk")
        } | {"clickable": 100 * clickable / max(lists, 1), "items": len(labels), "lists": lists}
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="saved_models/default/savedmodel")
    parser.add_argument("--judge", action="store_true", help="print the judged shares too")
    args = parser.parse_args(argv)
    found = study_lists(args.model)
    print("| session | typed | " + " | ".join(KINDS) + " |")
    print("|---" * (len(KINDS) + 2) + "|")
    for i, (session, typed) in enumerate(STUDY):
        cells = [", ".join(text for text, _ in found[i, kind]) or "—" for kind in KINDS]
        print(f"| {' > '.join(session)} | {typed} | " + " | ".join(cells) + " |")
    if args.judge:
        JUDGED = judgments(len(STUDY))
        shown = {(i, text) for (i, _), items in found.items() for text, _ in items}
        missing = sorted(shown - set(JUDGED))
        if missing:
            raise SystemExit(f"{len(missing)} items not judged yet, e.g. {missing[:5]}")
        for group, row in shares(found, JUDGED).items():
            print(f"\n{group}: " + ", ".join(f"{k} {v:.0f}" for k, v in row.items()))


if __name__ == "__main__":
    main()
