"""benchmarks/bench_decode.py runs end to end on a tiny untrained MTN."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_decode.py"


@pytest.mark.slow
def test_bench_decode_prints_the_ratio(capsys):
    spec = importlib.util.spec_from_file_location("bench_decode", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--preset", "tiny", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "untrained tiny MTN" in out
    assert "check: " in out
    assert "ratio keras-hub p50 / ours p50: search " in out
    assert "keras-hub's best on the cached step is the same as without cache" in out
    assert "(the search itself): XLA " in out
    assert "summary: " in out
