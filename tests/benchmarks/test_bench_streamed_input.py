"""benchmarks/bench_streamed_input.py on the made-up prepared dataset: a row per number of
copies, with the in-memory peak against the streamed one where the in-memory one ran."""

from script_module import load_script


def test_bench_streamed_input_prints_a_row_per_size(prepared_data, tmp_path, capsys):
    bench = load_script("benchmarks/bench_streamed_input.py")
    args = ["--data", str(prepared_data), "--copies", "1,2", "--preset", "tiny"]
    assert bench.main([*args, "--work", str(tmp_path), "--skip-memory-past", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("| copies | sessions | train.tsv MB | in memory: peak MB, s |")
    one, two = (line.split(" | ") for line in lines[3:])
    sessions = sum(1 for line in (prepared_data / "train.tsv").read_text().splitlines() if line)
    assert one[:2] == ["| 1", f"{sessions:,}"] and two[:2] == ["| 2", f"{2 * sessions:,}"]
    assert float(one[-1].rstrip(" |")) > 0
    assert two[3] == "not run" and two[-1] == "- |"
    assert list(tmp_path.iterdir()) == [] and not (prepared_data / "streamed").exists()
