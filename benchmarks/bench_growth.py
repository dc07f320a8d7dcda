"""The growth curve: time and peak memory of prepare, rank and export on logs N times the AOL
dev log (benchmarks/grow_log.py), the export's size, its load time and a keystroke's cost.

Why: the toolkit's stages were measured on the 900-user dev log only; a log the size of
AOL's (36 M rows, 99 x) or beyond must say which stage grows faster than the log before it
is made to take one. Each stage runs as its own process, as a user would run it, so its peak
resident memory (wait4's ru_maxrss) is its own; a stage past --limit-minutes or
--limit-gb of resident memory is stopped and its row says so (that is a finding too).

Chain, per factor, in --work: grow_log (logN.txt.gz, kept between runs), `prepare --protocol
all --split-by user --split-users 90,90` (dataN), a copy of --run (runN) whose query-log
index is rebuilt from dataN (`index`: rank's part that grows with the log; the copied
ranker and thresholds stay) or, with `--stages ...,rank,...`, the whole `rank --data dataN`
(its ranker fitted on the 90 validation users' decoded sessions: a fixed cost, 16 to 25
minutes on 2 cores), `export` (exportN), the export run once through `saved_model_cli run`
(`loader`: the graph's restore op and one `suggest`, as TensorFlow Serving loads a model),
then, in a fresh process, the export loaded through the app's model (mtn_tui LocalModel) and
bench_typing.py's queries typed key by key.

Usage: python benchmarks/bench_growth.py --factors 1,4,16 [--work /tmp/grow] [--run
           runs/default] [--plot /tmp/grow/growth.png] [--no-keys]
           [--stages prepare,index,export,loader,keys]
       python benchmarks/bench_growth.py --keystrokes EXPORT   (one export's load and keys)
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STAGES = ("prepare", "index", "rank", "export", "loader", "keys")
# The loader stage's session: one signature run through the graph's restore op
LOADER_INPUT = 'session=[["cheap flights", "hotel deals"]]'


def tree_rss_kb(pid):
    """Resident memory (KiB) of process `pid`, from /proc (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_stage(command, limit_s, limit_kb, log_path):
    """Runs `command` niced in its own session, stopping it past the limits: {"seconds",
    "peak_gb", "status": "ok", "failed (rc N)", "stopped: time" or "stopped: memory"}."""
    began = time.perf_counter()
    with open(log_path, "w") as log:
        child = subprocess.Popen(
            ["nice", "-n", "10", *command],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},  # its log readable while it runs
        )
        stopped = None
        while True:
            pid, code, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - began > limit_s:
                stopped = "stopped: time"
            elif tree_rss_kb(child.pid) > limit_kb:
                stopped = "stopped: memory"
            if stopped:
                os.killpg(child.pid, signal.SIGKILL)
                pid, code, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.5)
    child.returncode = os.waitstatus_to_exitcode(code)
    status = stopped or ("ok" if child.returncode == 0 else f"failed (rc {child.returncode})")
    seconds = time.perf_counter() - began
    return {"seconds": seconds, "peak_gb": usage.ru_maxrss / 2**20, "status": status}


def size_mb(path):
    """Bytes under `path`, in MB."""
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file()) / 1e6


def stage_commands(factor, work, run, keys, rank_valid=None):
    """(stage, command) of the chain for one factor; the run folder is copied afresh. `rank`
    fits its ranker on the validation split of `rank_valid` (a prepared dataset) if given."""
    python = sys.executable
    data, model, export = work / f"data{factor}", work / f"run{factor}", work / f"export{factor}"
    prepare = [python, "-m", "mtn_keras.prepare", "--input", str(work / f"log{factor}.txt.gz")]
    prepare += ["--out", str(data), "--protocol", "all", "--split-by", "user"]
    prepare += ["--split-users", "90,90", "--force"]
    commands = [("prepare", prepare)]
    commands.append(("index", [python, __file__, "--index", str(data), str(model)]))
    commands.append(("rank", [python, "-m", "mtn_keras.rank", "--model", str(model)]))
    commands[-1][1].extend(
        ["--data", str(data)] + (["--valid-data", rank_valid] if rank_valid else [])
    )
    exporting = [python, "-m", "mtn_keras.export", "--model", str(model)]
    commands.append(("export", exporting + ["--out", str(export / "savedmodel"), "--force"]))
    loader = [str(Path(python).with_name("saved_model_cli")), "run", "--dir"]
    loader += [str(export / "savedmodel"), "--tag_set", "serve", "--signature_def", "suggest"]
    commands.append(("loader", loader + ["--input_exprs", LOADER_INPUT]))
    if keys:
        commands.append(("keys", [python, __file__, "--keystrokes", str(export / "savedmodel")]))
    return commands


def measure_factor(factor, args):
    """One factor's row of the table: the log grown if absent, then each stage in turn (a
    stage that did not finish leaves the ones after it unrun)."""
    work = Path(args.work)
    log = work / f"log{factor}.txt.gz"
    if not log.exists():
        grow = [sys.executable, str(HERE / "grow_log.py"), "--factor", str(factor)]
        subprocess.run(grow + ["--seed", str(args.seed), "--out", str(log)], check=True)
    shutil.rmtree(work / f"run{factor}", ignore_errors=True)
    shutil.copytree(REPO / args.run, work / f"run{factor}")
    row = {"factor": factor}
    for stage, command in stage_commands(factor, work, args.run, args.keys, args.rank_valid):
        if stage not in args.stages:
            continue
        print(f"{factor} x {stage}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
        log_path = work / f"{stage}{factor}.log"
        row[stage] = run_stage(command, 60 * args.limit_minutes, args.limit_gb * 2**20, log_path)
        print(f"  {row[stage]}", file=sys.stderr, flush=True)
        if row[stage]["status"] != "ok":
            break
        if stage == "keys":
            row["keys"].update(json.loads(log_path.read_text().strip().splitlines()[-1]))
    stats_path = work / f"data{factor}" / "stats.json"
    if stats_path.exists():
        stats = json.loads(stats_path.read_text())
        row.update(rows=stats["rows_read"], users=stats["users"], vocab=stats["vocab_size"])
    for name, stages, path in (
        ("ranking_mb", ("index", "rank"), f"run{factor}/ranking"),
        ("export_mb", ("export",), f"export{factor}"),
    ):
        if any(row.get(stage, {}).get("status") == "ok" for stage in stages):
            row[name] = size_mb(work / path)
    return row


def cell(row, stage):
    """A stage's 'seconds s, peak GB' cell, or what stopped it, or '-' if it did not run."""
    done = row.get(stage)
    if done is None:
        return "-"
    text = f"{done['seconds']:,.0f} s, {done['peak_gb']:.2f} GiB"
    return text if done["status"] == "ok" else f"{done['status']} at {text}"


def table(rows):
    """The growth curve as one markdown table."""
    lines = [
        "| log | rows | users | vocab (train) | prepare | index | rank | export | loader "
        "| ranking/ MB | export MB | load s | key p50 / p99 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        keys = row.get("keys", {})
        load = f"{keys['load_s']:.1f}" if "load_s" in keys else "-"
        typed = f"{keys['p50_ms']:.0f} / {keys['p99_ms']:.0f}" if "p50_ms" in keys else "-"
        sizes = [f"{row[n]:,.0f}" if row.get(n) else "-" for n in ("ranking_mb", "export_mb")]
        lines.append(
            f"| {row['factor']} x | {row.get('rows', 0):,} | {row.get('users', 0):,} "
            f"| {row.get('vocab', 0):,} | {cell(row, 'prepare')} | {cell(row, 'index')} "
            f"| {cell(row, 'rank')} "
            f"| {cell(row, 'export')} | {cell(row, 'loader')} | {sizes[0]} | {sizes[1]} "
            f"| {load} | {typed} |"
        )
    return "\n".join(lines)


def plot(rows, path):
    """Seconds and peak GB of each stage against rows, log-log, with a line of slope one."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for index, (key, label) in enumerate((("seconds", "seconds"), ("peak_gb", "peak RSS, GiB"))):
        for stage in ("prepare", "index", "rank", "export"):
            points = [
                (r["rows"], r[stage][key])
                for r in rows
                if r.get(stage, {}).get("status") == "ok" and "rows" in r
            ]
            if points:
                axes[index].loglog(*zip(*points), marker="o", label=stage)
        first = [r for r in rows if r.get("prepare", {}).get("status") == "ok"]
        if len(first) > 1:
            x0, x1 = first[0]["rows"], first[-1]["rows"]
            y0 = first[0]["prepare"][key]
            axes[index].loglog([x0, x1], [y0, y0 * x1 / x0], "k:", label="as the log (slope 1)")
        axes[index].set(xlabel="rows of the log", ylabel=label)
        axes[index].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    print(f"wrote {path}", file=sys.stderr)


def index_only(data, model):
    """rank's part that grows with the log, alone: the query-log index of `data`'s training
    split, built and saved into `model`'s ranking folder (whose fitted ranker and thresholds,
    the copied run's, stay: fitting them decodes the 90 validation users' sessions, a cost
    that does not grow with the log), so that export holds the grown log's tables."""
    from mtn_keras.ranking.blocklist import blocked_phrases
    from mtn_keras.ranking.fitting_data import RankingData
    from mtn_keras.ranking.log_index import QueryLogIndex

    data = RankingData.load(data)
    index = QueryLogIndex.build(
        data.train_sessions, blocked_phrases(), users=data.train_users, evidence=data.evidence
    )
    index.save(str(Path(model) / "ranking"))
    print(json.dumps(index.sizes()))


def keystrokes(export, rounds=2):
    """Load time of an export through the app's model and its keystrokes' p50 and p99, as
    one JSON line (bench_typing.py's session, history and queries, clean and slipped)."""
    import bench_typing

    began = time.perf_counter()
    model = bench_typing.LocalModel(export)
    loaded = time.perf_counter() - began
    model.suggestions(bench_typing.SESSION, "lis", bench_typing.HISTORY)
    first = time.perf_counter() - began - loaded
    seconds = []
    for _ in range(rounds):
        for text in bench_typing.QUERIES + bench_typing.SLIPPED:
            for end in range(1, len(text) + 1):
                start = time.perf_counter()
                model.suggestions(bench_typing.SESSION, text[:end], bench_typing.HISTORY)
                seconds.append(time.perf_counter() - start)
    report = {"load_s": loaded, "first_call_s": first, "keys": len(seconds)}
    report["p50_ms"] = 1000 * statistics.median(seconds)
    report["p99_ms"] = bench_typing.percentile_ms(seconds, 0.99)
    print(json.dumps(report))


def main(argv=None):
    """The command line: the chain for each factor, then the table (and the plot)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factors", default="1,4,16", help="times the dev log, comma-separated")
    parser.add_argument("--work", default="/tmp/grow", help="logs, datasets, runs and exports")
    parser.add_argument("--run", default="runs/default", help="the trained run folder copied")
    parser.add_argument("--seed", type=int, default=1, help="grow_log.py's seed")
    parser.add_argument("--limit-minutes", type=float, default=25.0)
    parser.add_argument("--limit-gb", type=float, default=18.0)
    parser.add_argument("--no-keys", dest="keys", action="store_false", help="skip load/keys")
    parser.add_argument(
        "--rank-valid",
        help="a prepared dataset whose validation split fits rank's ranker (default: the grown "
        "log's own 90 users, 16 to 25 minutes of decoding whatever the log's size)",
    )
    parser.add_argument("--plot", help="the PNG to write (needs matplotlib)")
    parser.add_argument(
        "--stages", default="prepare,index,export,loader,keys", help=f"of {','.join(STAGES)}"
    )
    parser.add_argument("--keystrokes", help=argparse.SUPPRESS)
    parser.add_argument("--index", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.stages = args.stages.split(",")
    if args.index:
        index_only(*args.index)
        return 0
    if args.keystrokes:
        keystrokes(args.keystrokes)
        return 0
    Path(args.work).mkdir(parents=True, exist_ok=True)
    rows = []
    for factor in [int(f) for f in args.factors.split(",")]:
        rows.append(measure_factor(factor, args))
        Path(args.work, "growth.json").write_text(json.dumps(rows, indent=1))
        print(table(rows), flush=True)
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
