"""benchmarks/bench_typing.py: both exports answer every keystroke, in turn, through the
app's model, and the ratio of their medians is printed."""

from script_module import load_script


def test_both_models_answer_each_keystroke_and_the_ratio_is_printed(
    fake_model_with_history, capsys
):
    bench = load_script("benchmarks/bench_typing.py")
    path = str(fake_model_with_history)
    bench.main(["--reference", path, "--model", path, "--rounds", "1"])
    printed = capsys.readouterr().out.splitlines()
    keys = sum(len(text) for text in bench.QUERIES + bench.SLIPPED)
    assert printed[0].startswith(f"reference: {keys} keystrokes, p50 ")
    assert printed[1].startswith(f"model: {keys} keystrokes, p50 ")
    assert printed[2].startswith("model / reference, p50: ")
