"""A search log N times the AOL dev log that grows like a real one, written as it goes, so
that the toolkit's stages can be measured on logs the size of AOL's and beyond.

Why: the dev log has 900 users; a bigger log made by copying them would add no new queries
or words, and one made of random strings would add too many. Here each new user replays a
real user's sessions (the same rows, clicks and times of day, on days shifted within AOL's
three months, under a new id), and the user's rare words are swapped so that distinct
queries and distinct words grow with the rows as Heaps' law fitted on the dev log says.

How: the fit, V = K * n ** beta, is made on growing prefixes of the dev log's users (eight
seeded orders; the prefixes of a sixteenth of the rows and more), for distinct queries and
distinct words against rows. The first copy of the users keeps their queries (the dev log
itself, resampled); past it, the generator keeps a debt, the fitted curve (anchored at the
dev log's own counts) less what it made so far: a user's query that only one dev user typed
is altered while the query debt is positive (its rarest word swapped, consistently across
the user's queries, so reformulations stay reformulations), and the new word is minted (a
made-up word, once) while the word debt is positive, else drawn from the words seen.
Memory holds the dev log, never the output.

Usage: python benchmarks/grow_log.py --factor 4 --seed 1 --out /tmp/grow/log4.txt.gz
       python benchmarks/grow_log.py --fit        (the fit only)
       python benchmarks/grow_log.py --count PATH (rows, users, distinct queries and words)
"""

import argparse
import datetime
import gzip
import math
import random
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

DEV_LOG = Path(__file__).resolve().parents[1].parent / "shared/data/aol/aol-top1000-dev.txt.gz"
HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"
FIRST_ID = 100_000_000  # above every AOL id, so a grown user is never a real one
FIRST_DAY, LAST_DAY = datetime.date(2006, 3, 1), datetime.date(2006, 5, 31)
CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"
SYLLABLES = [c + v for c in CONSONANTS for v in VOWELS]
SLACK = 20.0  # a debt this large makes altering (or minting) certain; at zero, never


def open_text(path, mode="rt"):
    """The file at `path` as text, through gzip when its name ends in .gz."""
    if str(path).endswith(".gz"):
        return gzip.open(path, mode, encoding="utf-8", compresslevel=1)
    return open(path, mode, encoding="utf-8")


def read_users(path):
    """The log's users in file order, each a list of (query, time, rank, url) rows."""
    users, current, last = [], None, None
    with open_text(path) as log:
        next(log)
        for line in log:
            fields = line.rstrip("\n").split("\t")
            fields += [""] * (5 - len(fields))
            if fields[0] != last:
                current, last = [], fields[0]
                users.append(current)
            current.append(tuple(fields[1:5]))
    return users


def fit_line(points):
    """(K, beta) of V = K * n ** beta fitted by least squares on log V against log n."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(v) for _, v in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    beta = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return math.exp(my - beta * mx), beta


def prefix_curve(users, seed, points):
    """(rows, distinct queries, distinct words) at geometric prefixes of the users, taken in
    a seeded order."""
    order = list(users)
    random.Random(seed).shuffle(order)
    ends = {max(1, round(len(order) ** (i / points))) for i in range(1, points + 1)}
    queries, words, rows, curve = set(), set(), 0, []
    for index, user in enumerate(order, 1):
        for query, *_ in user:
            rows += 1
            if query not in queries:
                queries.add(query)
                words.update(query.split())
        if index in ends:
            curve.append((rows, len(queries), len(words)))
    return curve


def heaps_fit(users, orders=8, points=40, least=1 / 16):
    """Heaps' law fitted for distinct queries and for distinct words against rows, on the
    prefixes of `orders` seeded orders of the users that hold at least `least` of the rows
    (the regime the growth continues; small prefixes bend the words' curve upwards):
    {"queries": (K, beta), "words": (K, beta), "curve": the first order's points}."""
    floor = least * sum(len(user) for user in users)
    curves = [prefix_curve(users, seed, points) for seed in range(orders)]
    pooled = [point for curve in curves for point in curve if point[0] >= floor]
    return {
        "queries": fit_line([(n, q) for n, q, _ in pooled]),
        "words": fit_line([(n, w) for n, _, w in pooled]),
        "curve": curves[0],
    }


def minted_word(number):
    """The `number`-th made-up word: consonant-vowel syllables, at least three, all distinct."""
    syllables = []
    number += len(SYLLABLES) ** 2  # three syllables at the least, so it reads as a name
    while number:
        number, digit = divmod(number, len(SYLLABLES))
        syllables.append(SYLLABLES[digit])
    return "".join(reversed(syllables))


@lru_cache(maxsize=4096)
def shifted(day, days):
    """The date `day` ("YYYY-MM-DD") moved by `days`."""
    return (datetime.date.fromisoformat(day) + datetime.timedelta(days=days)).isoformat()


class Grower:
    """Writes new users made from the dev log's, keeping distinct queries and words on the
    fitted curves (see the module's docstring)."""

    def __init__(self, users, fit, seed):
        self.users, self.rng = users, random.Random(seed)
        self.query_users = Counter(q for user in users for q in {row[0] for row in user})
        self.word_rows = Counter(w for user in users for row in user for w in row[0].split())
        self.words = sorted(self.word_rows)
        self.dev_rows = sum(len(user) for user in users)
        self.dev_queries, self.dev_words = len(self.query_users), len(self.words)
        self.beta_queries, self.beta_words = fit["queries"][1], fit["words"][1]
        self.rows = self.new_queries = self.new_words = 0

    def target(self, dev_count, beta):
        """Distinct items the curve wants at the rows written so far, past the dev log's."""
        if self.rows <= self.dev_rows:
            return 0.0
        return dev_count * ((self.rows / self.dev_rows) ** beta - 1)

    def owes(self, dev_count, beta, made):
        """Whether to make one more new item now: certain at a debt of SLACK, never at none."""
        debt = self.target(dev_count, beta) - made
        return self.rng.random() < min(1.0, max(0.0, debt / SLACK))

    def swap_word(self):
        """A word to put in place of a rare one: a new one while the word curve asks for it,
        else one seen before (the dev log's or a made-up one, uniformly over all of them)."""
        if self.owes(self.dev_words, self.beta_words, self.new_words):
            self.new_words += 1
            return minted_word(self.new_words - 1)
        pick = self.rng.randrange(self.dev_words + self.new_words)
        return self.words[pick] if pick < self.dev_words else minted_word(pick - self.dev_words)

    def word_map(self, user):
        """The user's rare words to swap, {old: new}, chosen query by query while the query
        curve owes new queries: each swap makes new every query of the user holding it."""
        swaps, altered = {}, set()
        distinct = list(dict.fromkeys(row[0] for row in user))
        for query in distinct:
            words = query.split()
            if query in altered or not words or self.query_users[query] > 1:
                continue
            if not self.owes(self.dev_queries, self.beta_queries, self.new_queries):
                continue
            rarest = min(words, key=lambda w: (self.word_rows[w], self.rng.random()))
            swaps[rarest] = self.swap_word()
            hit = {q for q in distinct if q not in altered and rarest in q.split()}
            altered |= hit
            self.new_queries += len(hit)
        return swaps

    def user_rows(self, user, new_id):
        """The new user's rows: the source user's, with swapped words, on shifted days."""
        first, last = user[0][1][:10], user[-1][1][:10]
        low = (FIRST_DAY - datetime.date.fromisoformat(first)).days
        high = (LAST_DAY - datetime.date.fromisoformat(last)).days
        days = self.rng.randint(min(low, 0), max(high, 0))
        swaps = self.word_map(user) if self.rows >= self.dev_rows else {}
        for query, time, rank, url in user:
            if swaps:
                query = " ".join(swaps.get(w, w) for w in query.split(" "))
            yield f"{new_id}\t{query}\t{shifted(time[:10], days)}{time[10:]}\t{rank}\t{url}\n"

    def write(self, out, factor):
        """Writes `factor` copies' worth of new users to `out`, a user at a time."""
        new_id = FIRST_ID
        with open_text(out, "wt") as log:
            log.write(HEADER)
            for _ in range(factor):
                order = list(range(len(self.users)))
                self.rng.shuffle(order)
                for source in order:
                    user = self.users[source]
                    log.writelines(self.user_rows(user, new_id))
                    self.rows += len(user)
                    new_id += 1
        return new_id - FIRST_ID


def count(path):
    """Rows, users, distinct queries and distinct words of the log at `path`."""
    rows, users, queries, words, last = 0, 0, set(), set(), None
    with open_text(path) as log:
        next(log)
        for line in log:
            user, query = line.split("\t", 2)[:2]
            rows += 1
            users += user != last
            last = user
            if query not in queries:
                queries.add(query)
                words.update(query.split())
    return {"rows": rows, "users": users, "queries": len(queries), "words": len(words)}


def main(argv=None):
    """The command line: grow a log, or print the dev log's fit, or count a log."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factor", type=int, default=1, help="times the dev log's rows")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="the log to write (.gz: compressed)")
    parser.add_argument("--log", default=str(DEV_LOG), help="the log to grow (AOL's format)")
    parser.add_argument("--fit", action="store_true", help="print the fit and stop")
    parser.add_argument("--count", help="print a log's distinct counts and stop")
    args = parser.parse_args(argv)
    if args.count:
        print(count(args.count))
        return 0
    users = read_users(args.log)
    fit = heaps_fit(users)
    for name in ("queries", "words"):
        k, beta = fit[name]
        print(f"distinct {name} = {k:.3f} * rows ** {beta:.4f}", file=sys.stderr)
    if args.fit:
        for rows, queries, words in fit["curve"]:
            print(f"{rows}\t{queries}\t{words}")
        return 0
    if not args.out or args.factor < 1:
        parser.error("--out and a --factor of at least 1 are needed to grow a log")
    grower = Grower(users, fit, args.seed)
    made = grower.write(args.out, args.factor)
    print(
        f"wrote {args.out}: {grower.rows:,} rows, {made:,} users, {grower.new_queries:,} "
        f"queries and {grower.new_words:,} words made new past the dev log's",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
