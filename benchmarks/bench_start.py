"""What a person waits for before the first answer, in fresh processes: the app's model
backend until ready (importing TensorFlow, reading the model, compiling its signatures: the
app's own `start_seconds`) and one `python -m mtn_keras.suggest` command, each with a cold
XLA cache (an empty folder) and a warm one.

Run: python benchmarks/bench_start.py [--model default] [--reference PATH] [--rounds 3].
With --reference, the two models alternate round by round, so the ratio holds on a noisy
machine; the medians are printed.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BACKEND = """
import json, sys, time
began = time.perf_counter()
from app.model import Backend
backend = Backend(sys.argv[1])
print(json.dumps({"ready": time.perf_counter() - began, **backend.start_seconds}))
"""


def backend_start(model, cache):
    """The backend's start in a fresh process, split as the app reports it (seconds)."""
    env = {"XDG_CACHE_HOME": cache, "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    done = subprocess.run(
        [sys.executable, "-c", BACKEND, model],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def suggest_command(model, cache):
    """Wall seconds of one `suggest` command in a fresh process."""
    env = {
        "XDG_CACHE_HOME": cache,
        "PATH": "/usr/bin:/bin",
        "HOME": str(Path.home()),
        "TF_XLA_FLAGS": f"--tf_xla_persistent_cache_directory={cache}/mtn-keras/xla",
    }
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mtn_keras.suggest", "--model", model, "cheap flights"],
        capture_output=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    return {"wall": time.perf_counter() - began}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=str(ROOT / "saved_models" / "default"))
    parser.add_argument("--reference", help="another SavedModel, timed alternately")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    models = {"model": args.model} | ({"reference": args.reference} if args.reference else {})
    times = {(name, what): [] for name in models for what in ("app cold", "app warm", "suggest")}
    for _ in range(args.rounds):
        for name, path in models.items():
            with tempfile.TemporaryDirectory() as cache:
                times[name, "app cold"].append(backend_start(path, cache))
                times[name, "app warm"].append(backend_start(path, cache))
                times[name, "suggest"].append(suggest_command(path, cache))
    medians = {}
    for (name, what), runs in times.items():
        medians[name, what] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        parts = ", ".join(f"{key} {value:.1f} s" for key, value in medians[name, what].items())
        print(f"{name} {what}: {parts}")
    if args.reference:
        for what in ("app cold", "app warm", "suggest"):
            key = "wall" if what == "suggest" else "ready"
            ratio = medians["model", what][key] / medians["reference", what][key]
            print(f"{what}: model / reference = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
