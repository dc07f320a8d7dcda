"""What the log's own evidence (mtn_keras/data/evidence.py) marks on an AOL-format log: how many
queries its clicks call explicit, how many of them the word rule already calls so, how many
name a minor (their sessions are dropped), the site names; and for each innocent host of
innocent_hosts.txt, how many queries and rows its exception keeps from being marked. Counts
only; with --sample N, N of the queries marked beyond the word rule, drawn with --seed, to
read by hand (printed to the terminal: keep them out of docs).

Run: python -m studies.evidence_report --input ../shared/data/aol/aol-top1000-dev.txt.gz
"""

import argparse
import random
from collections import Counter, defaultdict

from mtn_keras.data.evidence import (
    ADULT_SHARE,
    MIN_ADULT_CLICKS,
    Evidence,
    adult_host,
    host_of,
    innocent_hosts,
    listed_domain,
)
from mtn_keras.data.logs import Tally, read_clicks, read_log
from mtn_keras.data.safety import explicit
from mtn_keras.data.text import normalise


def marked(adult, clicks):
    return adult >= MIN_ADULT_CLICKS and adult >= ADULT_SHARE * clicks


def kept_by_exceptions(path):
    """{innocent host: [queries, rows]} that the host's exception keeps from being marked."""
    innocent = innocent_hosts()
    clicks, adult, excepted = Counter(), Counter(), defaultdict(Counter)
    for raw, address in read_clicks(path, "aol"):
        query, host = normalise(raw), host_of(address)
        clicks[query] += 1
        adult[query] += adult_host(host)
        if (by := listed_domain(host)) in innocent:
            excepted[query][by] += 1
    rows = Counter(normalise(row[1]) for row in read_log(path, "aol", Tally(), False))
    kept = defaultdict(lambda: [0, 0])
    for query, hosts in excepted.items():
        if not marked(adult[query], clicks[query]):
            if marked(adult[query] + sum(hosts.values()), clicks[query]):
                host = hosts.most_common(1)[0][0]
                kept[host][0] += 1
                kept[host][1] += rows[query]
    return kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="an AOL-format log with clicks")
    parser.add_argument("--sample", type=int, default=0, help="queries to draw for reading")
    parser.add_argument("--seed", type=int, default=72)
    args = parser.parse_args(argv)
    evidence = Evidence.of_logs([args.input], "aol")
    by_words = [q for q in evidence.explicit if explicit(q)]
    child = [q for q in evidence.explicit if evidence.child_unsafe(q)]
    print(f"explicit by clicks: {len(evidence.explicit):,} queries")
    print(f"  the word rule calls explicit already: {len(by_words):,}")
    print(f"  beside a word for a minor (child-unsafe): {len(child):,}")
    print(f"site names: {len(evidence.sites):,} words")
    print("innocent hosts, by the queries (rows) their exception keeps unmarked:")
    kept = kept_by_exceptions(args.input)
    for host, (queries, rows) in sorted(kept.items(), key=lambda item: -item[1][1]):
        print(f"  {host:<32}{queries:>6,} queries {rows:>7,} rows")
    print(
        f"  {'all':<32}{sum(q for q, _ in kept.values()):>6,} queries "
        f"{sum(r for _, r in kept.values()):>7,} rows"
    )
    beyond = sorted(set(evidence.explicit) - set(by_words))
    for number, query in enumerate(random.Random(args.seed).sample(beyond, args.sample)):
        print(f"{number}\t{query}")


if __name__ == "__main__":
    main()
