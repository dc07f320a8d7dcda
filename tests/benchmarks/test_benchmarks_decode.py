"""benchmarks/bench_decode.py runs end to end on a tiny untrained MTN."""

import pytest
from script_module import load_script


@pytest.mark.slow
def test_bench_decode_prints_the_ratio(capsys):
    bench = load_script("benchmarks/bench_decode.py")
    assert bench.main(["--preset", "tiny", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "untrained tiny MTN" in out
    assert "check: " in out
    assert "ratio keras-hub p50 / ours p50: search " in out
    assert "keras-hub's best on the cached step is the same as without cache" in out
    assert "(the search itself): XLA " in out
    assert "summary: " in out
