"""Memory in the batch size: the peak resident memory of one process that loads a SavedModel
and answers one `suggest` call of B sessions, for B = 1, 64 and 1,000.

Why: issue 38, item 3: one call of 1,000 sessions peaked at 14 GB before the graph answered
large batches in chunks of 64 (mtn_keras/serving/inputs.py, CHUNK); a server must not fall
over because a client sent a large batch.

How: one fresh process per B (the peak of a process never goes down): load the SavedModel,
call `suggest` once on one session (to leave the first compilation's memory out of the
difference), read the peak RSS, then call it on B made-up sessions (bench_serving's) and read
the peak again. Printed per B: the peak after loading and after the call, the call's increase,
and the peak's ratio to B = 1's.

Usage: python benchmarks/bench_batch_memory.py [--model default] [--batches 1,64,1000]
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_serving import counts_of, model_parser  # noqa: E402

# Run in a fresh interpreter per batch size; prints one JSON line.
CHILD = """
import json, resource, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {benchmarks!r})
from bench_serving import made_up_sessions
from mtn_keras.base.xla_setup import set_up_xla
from mtn_keras.client.local import SavedModel
from mtn_keras.serving.savedmodel import resolve

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

set_up_xla()
# The `suggest` signature as a server calls it (the client's backend, not its Answer).
model = SavedModel(resolve({model!r}), ("suggest",))
sessions = made_up_sessions()
model.run("suggest", {{"session": sessions[:1]}})
loaded = peak_mb()
rows = [sessions[i % len(sessions)] for i in range({batch})]
out = model.run("suggest", {{"session": rows}})
assert out["suggestions"].shape[0] == {batch}
print(json.dumps({{"loaded_mb": loaded, "peak_mb": peak_mb()}}))
"""


def measure(model, batch):
    """{"loaded_mb", "peak_mb"} of one fresh process answering `batch` sessions."""
    code = CHILD.format(
        root=str(ROOT), benchmarks=str(ROOT / "benchmarks"), model=model, batch=batch
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_batch_memory: B={batch} failed: {done.stderr[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = model_parser(__doc__, ("--batches", "1,64,1000", "batch sizes"))
    args = parser.parse_args(argv)
    batches = counts_of(parser, "--batches", args.batches)
    print("sessions  loaded MB  peak MB  call MB  peak / B=1's")
    first = None
    for batch in batches:
        found = measure(args.model, batch)
        first = first or found["peak_mb"]
        print(
            f"{batch:8d}  {found['loaded_mb']:9.0f}  {found['peak_mb']:7.0f}  "
            f"{found['peak_mb'] - found['loaded_mb']:7.0f}  {found['peak_mb'] / first:12.2f}"
        )


if __name__ == "__main__":
    main()
