"""What the block list's phrases (`ADULT_PHRASES`) block on the AOL dev log: how many distinct
queries of the log hold one of them, how many of those no listed word blocked already, beside
what the whole list blocks, and a sample of the newly blocked to read for false positives
(printed only, never stored).

Run: python benchmarks/bench_blocklist.py [--log LOG] [--sample 20]. Skips with a message if
the log is absent.
"""

import argparse
import random
import re
from pathlib import Path

from dev_log import LOG

from mtn_keras.data.logs import Tally, read_log
from mtn_keras.data.text import normalise
from mtn_keras.ranking.blocklist import ADULT_PHRASES, blocked_phrases


def matcher(phrases):
    """A function: whether a normalised query holds one of `phrases` as whole words (the
    serving filter's rule, filters.blocked_pattern)."""
    pattern = re.compile(" (" + "|".join(map(re.escape, phrases)) + ") ")
    return lambda query: bool(pattern.search(f" {query} "))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log", default=str(LOG))
    parser.add_argument("--sample", type=int, default=20, help="blocked queries to print")
    args = parser.parse_args()
    if not Path(args.log).exists():
        print(f"skipped: {args.log} is absent")
        return
    queries = {normalise(row[1]) for row in read_log(args.log, "aol", Tally(), False)} - {""}
    own = {normalise(phrase) for phrase in ADULT_PHRASES}
    by_phrases = sorted(filter(matcher(sorted(own)), queries))
    by_words = matcher([p for p in blocked_phrases() if p not in own])
    new = [query for query in by_phrases if not by_words(query)]
    every = sum(map(matcher(blocked_phrases()), queries))
    print(f"distinct queries in the log: {len(queries):,}")
    print(f"blocked by the whole list: {every:,}")
    print(f"blocked by the {len(own)} adult phrases: {len(by_phrases):,}, of which no listed word")
    print(f"blocked already: {len(new):,}")
    shown = random.Random(0).sample(new, min(args.sample, len(new)))
    print(f"a sample of {len(shown)} of those, to read for false positives:")
    for query in sorted(shown):
        print(f"  {query}")


if __name__ == "__main__":
    main()
