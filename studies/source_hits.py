"""What each source of a completion list brings: on a prepared split's pairs typed to 5 and 8
characters, as typed and with one seeded slip (evaluate's cases), the items shown and the
next queries found by each source (`model`, `log`, `log+fixed`, ...; the beam's own split
into one word or more). How issue 58's third round chose its rules on the validation users.

Usage: python -m studies.source_hits [--model runs/default] [--data data/aol-90]
[--split valid] [--every 4]
"""

import argparse
from collections import Counter

CASES = ("5 characters", "5 characters, one slip", "8 characters", "8 characters, one slip")


def source_hits(suggester, pairs, typed, batch=64):
    """(SR@5 %, {source: (items shown, next queries found)}) of `complete` on the pairs."""
    from mtn_keras.data.text import normalise

    shown, found, hits = Counter(), Counter(), 0
    for start in range(0, len(pairs), batch):
        rows = pairs[start : start + batch]
        answers = suggester.complete([session for session, _ in rows], typed[start : start + batch])
        for (_, next_query), answer in zip(rows, answers):
            target = normalise(next_query)
            for item in answer:
                source = item.source
                if source == "model":
                    source += " (one word)" if len(item.text.split()) == 1 else " (more)"
                shown[source] += 1
                found[source] += item.text == target
            hits += any(item.text == target for item in answer)
    return 100 * hits / max(len(pairs), 1), {s: (n, found[s]) for s, n in shown.most_common()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/default")
    parser.add_argument("--data", default="data/aol-90")
    parser.add_argument("--split", default="valid")
    parser.add_argument("--every", type=int, default=4, help="score every Nth pair")
    args = parser.parse_args(argv)
    import mtn_keras
    from mtn_keras.data.prepared import load_split
    from mtn_keras.scorecard.completion import completion_cases

    cases = completion_cases(load_split(args.data, args.split), chars=(5, 8), typos=True)
    suggester = mtn_keras.load(args.model)
    for name in CASES:
        pairs, typed, _, _ = cases[name]
        rate, sources = source_hits(suggester, pairs[:: args.every], typed[:: args.every])
        print(f"\n{name}: {len(pairs[:: args.every])} pairs, SR@5 {rate:.2f}")
        for source, (items, hits) in sources.items():
            print(f"  {source:<24} {items:>6} items {hits:>5} found")


if __name__ == "__main__":
    main()
