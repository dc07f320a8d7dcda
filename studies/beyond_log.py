"""Completions beyond the log (`--beyond-log`) on the validation users: with 2, 4, 5 and 6
characters of the next query typed after its session, and 5 in an empty session, the lists of
a run folder without and with the loose search: how many were empty, how many it fills, how
often a filled list then holds the next query, and SR@5 over all. Writes the filled lists to
--lists for reading by hand (docs/ranking.md, "Beyond the log").

Run: python -m studies.beyond_log --run runs/default --data data/aol-90/valid.tsv --every 4
"""

import argparse

import mtn_keras
from mtn_keras.base.config import DecodeConfig
from mtn_keras.data.text import normalise

CASES = ((2, False), (4, False), (5, False), (6, False), (5, True))  # (typed, empty session)
BATCH = 64


def pairs_of(path, every):
    """(session number, the last 4 queries before it, next query) of every `every`-th pair
    of the sessions at `path` (one a line, TAB between its queries)."""
    pairs = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            queries = line.rstrip("\n").split("\t")
            pairs += [
                (number, queries[max(0, i - 4) : i], queries[i]) for i in range(1, len(queries))
            ]
    return pairs[::every]


def measured(off, on, rows, case, lists):
    """Counts of one case's `rows` (context, typed, next query) under the models `off` and
    `on`; each list the loose search filled is written to `lists`."""
    counts = dict.fromkeys(("empty", "filled", "items", "hits", "off", "on"), 0)
    for start in range(0, len(rows), BATCH):
        part = rows[start : start + BATCH]
        contexts, typed = [r[0] for r in part], [r[1] for r in part]
        for (context, prefix, target), was, now in zip(
            part, off.complete(contexts, typed), on.complete(contexts, typed)
        ):
            target, texts = normalise(target), [normalise(s.text) for s in now]
            counts["off"] += target in {normalise(s.text) for s in was}
            counts["on"] += target in texts
            if not was:
                counts["empty"] += 1
                counts["filled"] += bool(now)
                counts["items"] += len(now)
                counts["hits"] += bool(now) and target in texts
                if now:
                    shown = "; ".join(f"{s.text} {s.score:.4f}" for s in now)
                    lists.write(f"{case}\t{' | '.join(context)}\t{prefix}\t{target}\t{shown}\n")
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a run folder with a ranking")
    parser.add_argument("--data", required=True, help="the validation sessions (valid.tsv)")
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--least", type=float, default=0.0001, help="--beyond-log's P")
    parser.add_argument("--lists", default="beyond_log_lists.tsv")
    args = parser.parse_args(argv)
    pairs = pairs_of(args.data, args.every)
    off = mtn_keras.load(args.run)
    on = mtn_keras.load(args.run, DecodeConfig(beyond_log=args.least))
    print(
        "| typed | pairs | lists empty | filled | items added | filled lists holding it "
        "| SR@5 without -> with |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    with open(args.lists, "w", encoding="utf-8") as lists:
        for chars, empty in CASES:
            rows = [([] if empty else c, t[:chars], t) for _, c, t in pairs if len(t) > chars]
            case = f"{chars}{', empty session' if empty else ''}"
            got = measured(off, on, rows, case, lists)
            n = len(rows)
            print(
                f"| {case} | {n:,} | {got['empty']} | {got['filled']} | {got['items']} | "
                f"{got['hits']} | {100 * got['off'] / n:.2f} -> {100 * got['on'] / n:.2f} |"
            )


if __name__ == "__main__":
    main()
