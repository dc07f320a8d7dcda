"""What the log allows the judged study while typing (issue 58): for each of the 40 sessions,
the grounded completions of what the person typed, the phrases the issue's first measure
counts as grounded: a query of the log, the session or the history that starts with it, the
last query retyped with one slip, or the typed words continued by a word that follows the
last one in some query. A list can be clickable only where one exists; the rest bound the
share of clickable lists.

Usage: python -m studies.study_bound [--data data/aol-90]
"""

import argparse
from itertools import chain
from pathlib import Path

from mtn_keras.scorecard.typos import one_edit
from studies.searcher_lists import made_up_history
from studies.study_sessions import STUDY


def log_queries(data):
    """Every query of the prepared training split (what `rank` indexes)."""
    queries = set()
    with open(Path(data) / "train.tsv", encoding="utf-8") as rows:
        for row in rows:
            queries.update(row.rstrip("\n").split("\t"))
    queries.discard("")
    return queries


def word_pairs(queries, base=None):
    """{word: the words that follow it in some query of `queries`}, beside those of `base`
    (a word_pairs of other queries, left as it is)."""
    follows = {}
    for query in queries:
        words = query.split()
        for first, second in zip(words, words[1:]):
            follows.setdefault(first, set()).add(second)
    if base is None:
        return follows
    return base | {word: base.get(word, set()) | after for word, after in follows.items()}


def grounded(typed, session, queries, follows):
    """The grounded completions of `typed` after `session`: whole queries, the last query
    only retyped with one slip (the list never repeats it otherwise), then one-word
    continuations."""
    whole = sorted({q for q in queries if q.startswith(typed) and q != session[-1]})
    whole += [session[-1]] if typed in one_edit(session[-1]) else []
    words = typed.split()
    # the last typed word unfinished (continued into a word beginning with it) or finished
    # (followed by a word); either way joined to the word before it by an attested pair
    heads = [(" ".join(words[:-1]), words[-2], words[-1])] if len(words) > 1 else []
    heads.append((typed.strip(), words[-1], ""))
    continued = sorted(
        {
            f"{head} {word}"
            for head, last, unfinished in heads
            for word in follows.get(last, ())
            if word.startswith(unfinished) and f"{head} {word}" != session[-1]
        }
        - set(whole)
    )
    return whole + continued


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/aol-90", help="the prepared log (rank's)")
    args = parser.parse_args(argv)
    log = log_queries(args.data)
    log_pairs = word_pairs(log)
    history = made_up_history()
    empty = 0
    print("| session | typed | grounded, none with history | with history | the first five |")
    print("|---|---|---:|---:|---|")
    for session, typed in STUDY:
        own = [*session, *history]
        plain = grounded(typed, session, chain(log, session), word_pairs(session, log_pairs))
        mine = grounded(typed, session, chain(log, own), word_pairs(own, log_pairs))
        empty += (not plain) + (not mine)
        shown = ", ".join(mine[:5]) or "—"
        print(f"| {' > '.join(session)} | {typed} | {len(plain)} | {len(mine)} | {shown} |")
    lists = 2 * len(STUDY)
    print(f"\nlists with no grounded completion: {empty} of {lists}; clickable at most")
    print(f"{100 * (lists - empty) / lists:.2f}% of the lists while typing, whatever the ranking")


if __name__ == "__main__":
    main()
