"""Rows per second of `prepare` on the AOL dev log (../shared/data beside the repository).

Run: python benchmarks/bench_prepare.py [--repeat 3]. Skips with a message if the log is absent.
"""

import os
import sys
import tempfile
import time

from dev_log import LOG, arguments_or_skip

from mtn_keras.data.dataset_writer import prepare


def main() -> int:
    """Runs prepare `--repeat` times into a temporary directory; prints best and median rates."""
    args = arguments_or_skip(__doc__, "--repeat", 3)
    if args is None:
        return 0
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as temp:
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            stats = prepare([str(LOG)], os.path.join(temp, "out"), force=True, progress=False)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
