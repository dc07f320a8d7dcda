"""benchmarks/bench_grpc.py: a short run through both doors of one server (its refusals of bad
counts: test_benchmarks_serving.py)."""

import pytest
from script_module import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("benchmarks/bench_grpc.py")


@pytest.mark.slow
def test_a_short_run_prints_both_doors_for_each_count(bench, capsys):
    assert bench.main(["--clients", "1,2", "--requests", "2", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    for door in ("REST", "gRPC"):
        for count in (1, 2):
            assert f"{door:4s} {count:3d} clients x 2 requests x 2 rounds: p50 " in out
    assert out.count("sessions/s") == 4
