"""Seconds to build the query-log index (`QueryLogIndex.build`) from the sessions of the AOL
dev log repeated `--copies` times (10 copies: about 3.67 M rows), beside one copy in the
same process, so that the ratio shows how the build grows with the log. Each copy's queries
are made distinct except the first of each session, so that a popular query gains followers
with the log as it does in a larger one (the build was quadratic in them).

Run: python benchmarks/bench_index.py [--copies 10]. Skips with a message if the log is absent.
"""

import os
import tempfile
import time

from dev_log import LOG, arguments_or_skip

from mtn_keras.data.dataset_writer import prepare
from mtn_keras.data.prepared import load_split
from mtn_keras.data.sessions import Protocol
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.log_index import QueryLogIndex


def sessions_of(log):
    """The training sessions of the log prepared under the `all` protocol."""
    with tempfile.TemporaryDirectory() as temp:
        out = os.path.join(temp, "data")
        prepare([str(log)], out, protocol=Protocol(name="all", min_queries=2), progress=False)
        return load_split(out, "train")


def timed_build(sessions):
    start = time.perf_counter()
    index = QueryLogIndex.build(sessions, blocked_phrases())
    return time.perf_counter() - start, index


def main() -> int:
    args = arguments_or_skip(__doc__, "--copies", 10)
    if args is None:
        return 0
    sessions = sessions_of(LOG)
    many = [
        [q if i == 0 or copy == 0 else f"{q} v{copy}" for i, q in enumerate(s)]
        for copy in range(args.copies)
        for s in sessions
    ]
    one_seconds, _ = timed_build(sessions)
    many_seconds, index = timed_build(many)
    print(f"1 copy: {len(sessions):,} sessions in {one_seconds:.1f} s")
    print(
        f"{args.copies} copies: {len(many):,} sessions, {index.sizes()['queries']:,} queries "
        f"in {many_seconds:.1f} s ({many_seconds / one_seconds:.1f}x one copy)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
