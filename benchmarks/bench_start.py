"""What a person waits for before the first answer, in fresh processes: the app's model
until ready (importing TensorFlow, reading the model, compiling its signature: the
app's own `start_seconds`) and one `python -m mtn_keras.suggest` command, each with a cold
XLA cache (an empty folder) and then a warm one.

Run: python benchmarks/bench_start.py [--model default] [--reference PATH]
[--reference-code DIR] [--rounds 3] [--server | --serve]. With --reference (another SavedModel) or
--reference-code (another checkout of this repository, e.g. `git archive main | tar -x -C
DIR`, run on the same model), the two alternate round by round, so the ratio holds on a
noisy machine; the medians are printed. With --server, the app's model in process (warm
XLA cache) alternates instead with the app on a warm local `python -m mtn_keras.serve` of the
same model (`mtn-tui --server`: its metadata read and a first `complete` answered).

With --serve (issue 60, item 4): `python -m mtn_keras.serve` from its start to its status's
first answer (LOADING), to AVAILABLE and to the first `suggest` answered, with a cold XLA cache
and then a warm one, beside a fresh process that only imports TensorFlow and loads the
SavedModel (`baseline`), round by round; the medians and warm / baseline are printed.
"""

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from serve_load import HOST, free_port, start_server  # noqa: E402

from mtn_keras.serving.savedmodel import resolve  # noqa: E402

LOCAL = """
import json, sys, time
began = time.perf_counter()
from mtn_tui.model import LocalModel
app_model = LocalModel(sys.argv[1])
print(json.dumps({"ready": time.perf_counter() - began, **app_model.start_seconds}))
"""
REMOTE = """
import json, sys, time
began = time.perf_counter()
from mtn_tui.remote_model import RemoteModel
app_model = RemoteModel(sys.argv[1])
app_model.suggestions(["a"], "a")
ready = time.perf_counter() - began
print(json.dumps({"ready": ready, "tensorflow": float("tensorflow" in sys.modules)}))
"""
WHAT = ("app cold", "app warm", "suggest cold", "suggest warm")
BASELINE = """
import sys
import tensorflow as tf
tf.saved_model.load(sys.argv[1])
"""


def environment(cache):
    """A fresh process's environment: the caches (XLA's included) under `cache`."""
    return {"XDG_CACHE_HOME": cache, "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}


def app_model_start(model, code, cache, script=LOCAL):
    """The app's model's start in a fresh process running the checkout `code`, split as the app
    reports it (seconds); `script` (LOCAL, or REMOTE for a server's address) starts it."""
    done = subprocess.run(
        [sys.executable, "-c", script, model],
        capture_output=True,
        text=True,
        cwd=code,
        env=environment(cache),
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def suggest_command(model, code, cache):
    """Wall seconds of one `suggest` command in a fresh process running the checkout `code`."""
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mtn_keras.suggest", "--model", model, "cheap flights"],
        capture_output=True,
        cwd=code,
        env=environment(cache),
        check=True,
    )
    return {"wall": time.perf_counter() - began}


@contextlib.contextmanager
def warm_server(model):
    """The REST address of `model` under `python -m mtn_keras.serve` on a free local port,
    once its status says AVAILABLE (it answers LOADING at once); stopped on leaving."""
    port = free_port()
    server = start_server(model, port)
    try:
        yield f"http://{HOST}:{port}/v1/models/mtn"
    finally:
        server.terminate()
        server.wait(30)


def against_server(model, rounds):
    """The app in process (warm XLA cache) and on a warm local server, alternately: medians."""
    times = {"app warm in process": [], "app on a local server": []}
    with warm_server(model) as url, tempfile.TemporaryDirectory() as cache:
        app_model_start(model, ROOT, cache)  # fills the XLA cache: the warm start is timed
        for _ in range(rounds):
            times["app warm in process"].append(app_model_start(model, ROOT, cache))
            times["app on a local server"].append(app_model_start(url, ROOT, cache, REMOTE))
    for what, found in times.items():
        medians = {key: statistics.median(run[key] for run in found) for key in found[0]}
        print(f"{what}: " + ", ".join(f"{key} {value:.2f}" for key, value in medians.items()))
    return 0


def serve_start(model, cache):
    """Seconds from starting `python -m mtn_keras.serve` to its status's first answer, to
    AVAILABLE and to the first `suggest` answered (polled every 0.1 s), in a fresh process."""
    port = free_port()
    command = [sys.executable, "-m", "mtn_keras.serve", "--model", model, "--name", "bench"]
    command += ["--port", str(port), "--grpc-port", str(free_port())]
    url = f"http://127.0.0.1:{port}/v1/models/bench"
    body = json.dumps({"signature_name": "suggest", "instances": [["cheap flights"]]}).encode()
    began, times = time.perf_counter(), {}
    server = subprocess.Popen(command, cwd=ROOT, env=environment(cache), stderr=subprocess.DEVNULL)
    try:
        while server.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=5) as status:
                    state = json.load(status)["model_version_status"][0]["state"]
                times.setdefault("listening", time.perf_counter() - began)
                if state == "AVAILABLE":
                    times.setdefault("available", time.perf_counter() - began)
                    urllib.request.urlopen(f"{url}:predict", body, timeout=60).close()
                    times["answer"] = time.perf_counter() - began
                    break
            except OSError:  # not yet listening
                pass
            time.sleep(0.1)  # not in a busy loop: the server's load shares the CPU with it
        if server.poll() is not None:
            raise SystemExit(f"python -m mtn_keras.serve --model {model} stopped")
        return times
    finally:
        server.terminate()
        server.wait(30)


def against_baseline(model, rounds):
    """The server's start, cold and warm, beside importing TensorFlow and loading the
    SavedModel in a fresh process, alternately: medians, and warm / baseline."""
    path = str(resolve(model))
    times = {"serve cold": [], "serve warm": [], "baseline": []}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as cache:
            times["serve cold"].append(serve_start(model, cache))
            times["serve warm"].append(serve_start(model, cache))
            began = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", BASELINE, path], env=environment(cache), check=True
            )
            times["baseline"].append({"loaded": time.perf_counter() - began})
    medians = {}
    for what, found in times.items():
        medians[what] = {key: statistics.median(run[key] for run in found) for key in found[0]}
        print(f"{what}: " + ", ".join(f"{k} {v:.1f} s" for k, v in medians[what].items()))
    ratio = medians["serve warm"]["answer"] / medians["baseline"]["loaded"]
    print(f"first answer, warm / baseline (import tensorflow + load the SavedModel): {ratio:.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=str(ROOT / "saved_models" / "default"))
    parser.add_argument("--reference", help="another SavedModel, timed alternately")
    parser.add_argument(
        "--reference-code", help="another checkout of this repository, timed alternately"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--server", action="store_true", help="time the app in process against a local server"
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="time python -m mtn_keras.serve's start against import tensorflow + load",
    )
    args = parser.parse_args()
    if args.serve:
        return against_baseline(args.model, args.rounds)
    if args.server:
        return against_server(args.model, args.rounds)
    if args.reference_code and not (Path(args.reference_code) / "app" / "model.py").is_file():
        parser.error(f"--reference-code {args.reference_code} is not a checkout of mtn-keras")
    runs = {"model": (args.model, ROOT)}
    if args.reference or args.reference_code:
        runs["reference"] = (args.reference or args.model, args.reference_code or ROOT)
    times = {(name, what): [] for name in runs for what in WHAT}
    for _ in range(args.rounds):
        for name, (path, code) in runs.items():
            with tempfile.TemporaryDirectory() as cache:
                times[name, "suggest cold"].append(suggest_command(path, code, cache))
                times[name, "suggest warm"].append(suggest_command(path, code, cache))
            with tempfile.TemporaryDirectory() as cache:
                times[name, "app cold"].append(app_model_start(path, code, cache))
                times[name, "app warm"].append(app_model_start(path, code, cache))
    medians = {}
    for (name, what), found in times.items():
        medians[name, what] = {
            key: statistics.median(run[key] for run in found) for key in found[0]
        }
        parts = ", ".join(f"{key} {value:.1f} s" for key, value in medians[name, what].items())
        print(f"{name} {what}: {parts}")
    if len(runs) == 2:
        for what in WHAT:
            key = "wall" if what.startswith("suggest") else "ready"
            ratio = medians["model", what][key] / medians["reference", what][key]
            print(f"{what}: model / reference = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
