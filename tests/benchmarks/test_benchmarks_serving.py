"""benchmarks/bench_serving.py: its made-up sessions, the refusals of bad counts by every bench
that reads them with its counts_of, and a short run on the bundled model."""

import pytest
from script_module import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("benchmarks/bench_serving.py")


def test_sessions_are_a_users_queries_in_order_right_aligned(bench, tmp_path):
    log = tmp_path / "log.txt"
    rows = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"]
    rows += [
        f"{user}\t{query}\t2006-03-01 10:00:00\t\t"
        for user, query in [(1, "a"), (1, "b"), (2, "x"), (1, "c"), (1, "d")]
    ]
    log.write_text("\n".join(rows) + "\n")
    assert bench.made_up_sessions(log, longest=3) == [
        ["", "", "a"],
        ["", "a", "b"],
        ["a", "b", "c"],
        ["b", "c", "d"],
        ["", "", "x"],
    ]


@pytest.mark.parametrize(
    "script, option",
    [
        ("bench_serving", "--batches"),
        ("bench_grpc", "--clients"),
        ("bench_http", "--clients"),
        ("bench_page", "--people"),
        ("bench_batch_memory", "--batches"),
    ],
)
@pytest.mark.parametrize("counts", ["1,x", "0,8", ""])
def test_bad_counts_are_refused_with_a_message(script, option, counts, capsys):
    with pytest.raises(SystemExit) as exit_:
        load_script(f"benchmarks/{script}.py").main([option, counts])
    assert exit_.value.code == 2
    assert f"{option} {counts}" in capsys.readouterr().err


@pytest.mark.slow
def test_a_short_run_prints_each_batch_size(bench, capsys):
    assert bench.main(["--seconds", "0.2", "--batches", "1,2"]) == 0
    out = capsys.readouterr().out
    for size in (1, 2):
        assert f"batch {size:3d}: first call " in out
    assert out.count("sessions/s") == 2
