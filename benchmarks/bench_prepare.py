"""Rows per second of `prepare` on the AOL dev log (../shared/data beside the repository), and
the share of it that reading the log's clicks takes (data/evidence.py: the domain list loaded
once, then two passes over the clicks), measured in the same process.

Run: python benchmarks/bench_prepare.py [--repeat 3]. Skips with a message if the log is absent.
"""

import os
import sys
import tempfile
import time

from dev_log import LOG, arguments_or_skip

from mtn_keras.data.dataset_writer import prepare
from mtn_keras.data.evidence import Evidence, adult_domains


def main() -> int:
    """Runs prepare `--repeat` times into a temporary directory; prints best and median rates."""
    args = arguments_or_skip(__doc__, "--repeat", 3)
    if args is None:
        return 0
    walls, cpus = [], []
    loading = time.perf_counter()
    adult_domains()  # read once per process, as prepare reads it
    loading = time.perf_counter() - loading
    clicks = []
    with tempfile.TemporaryDirectory() as temp:
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            stats = prepare([str(LOG)], os.path.join(temp, "out"), force=True, progress=False)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            wall = time.perf_counter()
            Evidence.of_logs([str(LOG)], "aol")
            clicks.append(time.perf_counter() - wall)
    rows = stats["rows_read"]
    splits = stats["splits"].values()
    print(
        f"{LOG.name}: {rows:,} rows, {sum(s['sessions'] for s in splits):,} sessions, "
        f"{sum(s['pairs'] for s in splits):,} pairs, vocabulary {stats['vocab_size']:,}"
    )
    print(
        f"wall: best {min(walls):.2f} s = {rows / min(walls):,.0f} rows/s, "
        f"median {sorted(walls)[len(walls) // 2]:.2f} s"
    )
    print(f"cpu:  best {min(cpus):.2f} s = {rows / min(cpus):,.0f} rows/s")
    print(
        f"the clicks' evidence: {min(clicks):.2f} s best, {min(clicks) / min(walls):.2f} of a "
        f"prepare; the domain list loaded once in {loading:.2f} s (not counted above)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
