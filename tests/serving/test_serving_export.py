"""The serving graph, the suggest/export/evaluate commands and the SavedModel's contract."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from fresh_python import printed_json
from hang_limit import HANG_S

K = 5  # the k of the `service` and `exported` fixtures (conftest.py)


def padded(sessions):
    width = max(len(s) for s in sessions)
    return [s + [""] * (width - len(s)) for s in sessions]


SESSIONS = [
    ["cheap flights", "best cheap flights"],
    ["Hotel Deals!!", "hotel deals near me", "", "HOTEL deals reviews"],
    ["used cars", "zzyzx gadgets"],  # an out-of-vocabulary word
    ["", ""],
]


def as_tensor(sessions):
    import tensorflow as tf

    return tf.constant(padded(sessions))


def test_suggestions_are_ranked_distinct_and_clean(service, trained):
    out = service.suggest(as_tensor(SESSIONS))
    texts = out["suggestions"].numpy().astype(str)
    scores = out["scores"].numpy()
    assert texts.shape == (4, K) and scores.shape == (4, K)
    for row in range(3):
        assert (np.diff(scores[row][np.isfinite(scores[row])]) <= 1e-6).all()
        real = [t for t in texts[row] if t]
        assert real, "a session with words gets suggestions"
        assert all("<unk>" not in t and "<pad>" not in t for t in real)
        assert len({tuple(sorted(t.split())) for t in real}) == len(real)
    assert (texts[3] == "").all() and np.isneginf(scores[3]).all()


def test_a_run_of_characters_is_no_word_to_suggest(service):
    """After a session of 512 a's, no suggestion holds them ("aaa...a com");
    the words people type are suggested as before."""
    out = service.suggest(as_tensor([["a" * 512], ["cheap flights " + "b" * 40]]))
    texts = [t for t in out["suggestions"].numpy().astype(str).ravel() if t]
    assert not any(len(word) > 32 for text in texts for word in text.split()), texts
    assert any("cheap" in text or "flights" in text for text in texts), texts


def test_the_last_query_is_not_suggested_again(service, trained):
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.serving.service import SuggestionService

    sessions = as_tensor(
        [["cheap flights", "best cheap flights"], ["used cars", "used cars online"]]
    )
    for row, last in enumerate(["best cheap flights", "used cars online"]):
        assert last not in service.suggest(sessions)["suggestions"].numpy().astype(str)[row]
    repeating = SuggestionService(
        trained.model, trained.vocab.tokens, DecodeConfig(k=K, beam=6, repeat_last=True, xla=False)
    )
    texts = repeating.suggest(sessions)["suggestions"].numpy().astype(str)
    assert all(any(t) for t in texts)


def test_normalisation_matches_the_data_pipeline(service):
    from mtn_keras.data.text import normalise

    raw = ["Hotel Deals!!", "  über-CAFÉ, (paris) ", "a.b/c", "TAB\there"]
    got = [q.decode() for q in service.encoder.prepare(as_tensor([raw])).queries.numpy()[0]]
    assert [q for q in got if q] == [normalise(q) for q in raw]


def test_prefix_constraint_and_copied_unknown_words(service):
    import tensorflow as tf

    session = as_tensor([["used cars", "zzyzx gadgets"]])
    out = service.complete(session, tf.constant(["ZZYZX"]))
    texts = [t for t in out["suggestions"].numpy().astype(str)[0] if t]
    assert texts and all(t.split()[0] == "zzyzx" for t in texts)
    out = service.complete(tf.concat([session] * 2, 0), tf.constant(["used c", "qwerty cars"]))
    used, named = ([t for t in row if t] for row in out["suggestions"].numpy().astype(str))
    assert used and all(t.startswith("used c") for t in used), used
    own = {"used", "cars", "zzyzx", "gadgets"}  # a name the log lacks: no phrase around it
    assert all(t.startswith("qwerty cars") and set(t.split()[2:]) <= own for t in named), named


def test_an_unfinished_last_word_is_completed(service):
    import tensorflow as tf

    session = as_tensor([["cheap flights", "hotel deals"]] * 3)
    out = service.complete(session, tf.constant(["chea", "cheap ", "best chea"]))
    texts = out["suggestions"].numpy().astype(str)
    assert all(t.split()[0] == "cheap" for t in texts[0] if t), texts[0]
    assert all(t.split()[0] == "cheap" for t in texts[1] if t), texts[1]
    assert all(t.split()[:2] == ["best", "cheap"] for t in texts[2] if t), texts[2]
    assert all(any(row) for row in texts), texts


def test_copy_attention_and_source_tokens(service):
    out = service.suggest(as_tensor([["used cars", "zzyzx gadgets"]]))
    sources = out["source_tokens"].numpy().astype(str)[0]
    weights = out["copy_attention"].numpy()[0]
    assert weights.shape == (K,) + sources.shape
    assert (weights >= 0).all() and (weights[:, sources == ""] == 0).all()
    assert "zzyzx" in sources.ravel().tolist()


def test_session_attention(service):
    out = service.session_attention(as_tensor([["a b", "c d", "e"]]))
    attention, queries = out["attention"].numpy(), out["queries"].numpy().astype(str)
    size = queries.shape[1]
    assert attention.shape[0] == 1 and attention.shape[-2:] == (size, size)
    assert list(queries[0][-3:]) == ["a b", "c d", "e"]
    np.testing.assert_allclose(attention.sum(-1), 1.0, atol=1e-5)


def test_savedmodel_matches_python_and_handles_bad_input(service, exported):
    """Load with plain TensorFlow in a fresh process (no import of this project)."""
    script = textwrap.dedent(f"""
        import json, sys
        import tensorflow as tf
        assert not any(m.startswith("mtn_keras") for m in sys.modules)
        model = tf.saved_model.load({str(exported)!r})
        names = {{"serving_default", "suggest", "complete", "session_attention"}}
        assert set(model.signatures) >= names
        suggest = model.signatures["suggest"]
        def run(rows, shape=None):
            out = suggest(session=tf.constant(rows, dtype=tf.string, shape=shape))
            return {{"suggestions": out["suggestions"].numpy().astype(str).tolist(),
                    "scores": [[float(x) for x in r] for r in out["scores"].numpy()],
                    "dtype": out["scores"].dtype.name}}
        result = {{
            "main": run({padded(SESSIONS)!r}),
            "empty": run([], shape=[1, 0]),
            "long": run([["word " * 40, "x " * 3, "cheap flights"]]),
            "many": run([["used cars"] * 12]),
            "batch64": run([["cheap flights", "hotel deals"]] * 64),
            "attention": list(model.signatures["session_attention"](
                session=tf.constant([["a", "b"]]))["attention"].shape),
            "default": model.signatures["serving_default"](
                session=tf.constant([["used cars"]]))["suggestions"].shape.as_list(),
        }}
        print(json.dumps(result))
    """)
    result = printed_json(script)
    mine = service.suggest(as_tensor(SESSIONS))
    assert result["main"]["suggestions"] == mine["suggestions"].numpy().astype(str).tolist()
    np.testing.assert_allclose(result["main"]["scores"], mine["scores"].numpy(), atol=1e-5)
    assert result["main"]["dtype"] == "float32"
    assert result["empty"]["suggestions"] == [[""] * K]
    assert all(s == float("-inf") for s in result["empty"]["scores"][0])
    assert any(result["long"]["suggestions"][0]) and any(result["many"]["suggestions"][0])
    assert len(result["batch64"]["suggestions"]) == 64
    assert result["batch64"]["suggestions"][0] == result["batch64"]["suggestions"][63]
    assert result["attention"][0] == 1 and result["attention"][-1] == result["attention"][-2]
    assert result["default"] == [1, K]


def run_command(*args, timeout=HANG_S):
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=timeout
    )


def test_suggest_command(trained_model_dir):
    done = run_command(
        "mtn_keras.suggest",
        "--model",
        str(trained_model_dir),
        "--k",
        "3",
        "cheap flights",
        "best cheap flights",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert 1 <= len(lines) <= 3
    scores = [float(line.split("\t")[0]) for line in lines]
    assert scores == sorted(scores, reverse=True) and all(line.split("\t")[1] for line in lines)


def test_suggest_completes_the_first_query_of_a_session(exported):
    """No query yet ("" alone) and a typed prefix: completions, not "no words"."""
    done = run_command("mtn_keras.suggest", "--model", str(exported), "--prefix", "chea", "")
    assert done.returncode == 0, done.stderr[-2000:]
    texts = [line.split("\t")[1] for line in done.stdout.strip().splitlines()]
    assert texts and all(text.startswith("chea") for text in texts)
    nothing = run_command("mtn_keras.suggest", "--model", str(exported), "", "!!")
    assert nothing.returncode != 0 and "have no words after normalising" in nothing.stderr


def test_suggest_answers_sessions_from_standard_input_one_line_each(trained_model_dir, exported):
    """One start-up for many sessions, from a run folder and from an export alike: a line
    per session, its suggestions as the single-session form gives them."""
    lines = "cheap flights\tbest cheap flights\n\nused cars\nhotel deals\thotel deals near me\n"
    for model in (trained_model_dir, exported):
        done = subprocess.run(
            [sys.executable, "-m", "mtn_keras.suggest", "--model", str(model), "--k", "3"],
            input=lines,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        answers = done.stdout.split("\n")[:-1]
        assert len(answers) == 4 and answers[1] == "", answers
        single = run_command(
            "mtn_keras.suggest", "--model", str(model), "--k", "3", "used cars"
        ).stdout.splitlines()
        assert answers[2].split("\t") == [line.split("\t")[1] for line in single]
    bad = subprocess.run(
        [sys.executable, "-m", "mtn_keras.suggest", "--model", str(exported)],
        input=b"cheap flights\nweather \xff\n" + b"\0" * (3 << 20) + b"\nused cars\n",
        capture_output=True,
        timeout=300,
    )
    assert bad.returncode == 2 and b"standard input line 2 is not UTF-8" in bad.stderr
    assert b"standard input line 3 is longer than 1,048,576 bytes" in bad.stderr
    # Each such line is answered with an empty line, the run goes on.
    answered = bad.stdout.decode().split("\n")[:-1]
    assert len(answered) == 4 and answered[1:3] == ["", ""] and answered[3], answered


def test_suggest_answers_each_line_as_it_arrives(exported):
    """A script keeps one process, writing a session and reading its answer."""
    import queue
    import threading

    process = subprocess.Popen(
        [sys.executable, "-m", "mtn_keras.suggest", "--model", str(exported), "--k", "3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    answers = queue.Queue()
    threading.Thread(target=lambda: [answers.put(line) for line in process.stdout]).start()
    try:
        for session in ("cheap flights", "used cars\tused cars online"):
            process.stdin.write(session + "\n")
            process.stdin.flush()
            assert answers.get(timeout=300).endswith("\n")  # before the input ends
        process.stdin.close()
        assert process.wait(60) == 0
    finally:
        process.kill()


@pytest.mark.slow  # a fresh process that imports TensorFlow: about 6 s
def test_suggest_command_on_a_missing_model(tmp_path):
    done = run_command("mtn_keras.suggest", "--model", str(tmp_path / "nope"), "a query")
    assert done.returncode == 2 and "the path does not exist" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_corrupt_model_gets_a_clear_message(trained_model_dir, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(trained_model_dir, broken, ignore=shutil.ignore_patterns("tensorboard"))
    (broken / "model.keras").write_bytes(b"not a zip archive")
    done = run_command("mtn_keras.suggest", "--model", str(broken), "a query")
    assert done.returncode == 2 and "model.keras: cannot load the model" in done.stderr
    assert "Traceback" not in done.stderr


def test_export_refuses_to_overwrite(trained_model_dir, exported):
    done = run_command(
        "mtn_keras.export", "--model", str(trained_model_dir), "--out", str(exported)
    )
    assert done.returncode == 2 and "--force" in done.stderr


def test_evaluate_command(trained_model_dir, prepared_data, made_up_log, tmp_path):
    report = tmp_path / "report.json"
    done = run_command(
        "mtn_keras.evaluate",
        "--model",
        str(trained_model_dir),
        "--input",
        str(made_up_log),
        "--json",
        str(report),
        "--chart",
        str(tmp_path / "bleu.png"),
        "--markdown",
        str(tmp_path / "table.md"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(report.read_text())
    for key in ("pairs", "bleu", "precisions", "bp", "perplexity", "size_mb", "sr@1", "sr@5"):
        assert key in result
    assert set(result["anchors"]) == {"copy-last", "adj"}
    assert result["anchors"]["copy-last"]["pairs"] == result["pairs"] > 0
    assert np.isfinite(result["perplexity"]) and len(result["precisions"]) == 4
    assert (tmp_path / "bleu.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| mtn |" in (tmp_path / "table.md").read_text()


def test_evaluate_prefix_scores_complete_of_a_savedmodel_beside_mpc(
    exported, prepared_data, tmp_path
):
    report = tmp_path / "prefix.json"
    done = run_command(
        "mtn_keras.evaluate",
        "--model",
        str(exported),
        "--data",
        str(prepared_data),
        "--prefix",
        "2,4",
        "--bootstrap",
        "20",
        "--json",
        str(report),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(report.read_text())
    first = "first query, 4 characters, empty session"
    assert {"2 characters", "4 characters", first} <= set(result)
    rows = result["4 characters"]
    name = exported.parent.name  # the row of a SavedModel is named by its folder
    assert set(rows) == {name, "MPC", "MPC without the session's queries"}
    assert rows[name]["pairs"] == rows["MPC"]["pairs"] > 0
    assert rows[name]["sr@5_ci"][0] <= rows[name]["sr@5"]
    assert result[first][name]["pairs"] == result[first]["MPC"]["pairs"] > 0
    assert result[first]["MPC"]["sr@5"] > 0
    assert f"| 4 characters | {name} |" in done.stdout
