"""docs/serving.md against the bundled model's own signature definitions: every request example
is one that `serve` (and TensorFlow Serving) accepts for its signature, every answer and the
signature table name outputs the signature has, of its rank and fixed sizes."""

import json
import re
from pathlib import Path

import pytest

from mtn_keras.serving.requests import INPUT_RANKS, parse_request
from mtn_keras.serving.savedmodel import bundled_model

PAGE = Path(__file__).resolve().parents[2] / "docs" / "serving.md"
EXAMPLE = re.compile(
    r"<!-- example: (\S+) (request|response) (row|columnar) -->\n```json\n(.+?)\n```"
)
TABLE_ROW = re.compile(r"^\| `(\w+)` \| (.+?) \| (.+?) \|$", re.MULTILINE)


@pytest.fixture(scope="module")
def signatures():
    """{name: SignatureDef} of the bundled model, read without TensorFlow's runtime."""
    from tensorflow.core.protobuf import saved_model_pb2

    model = saved_model_pb2.SavedModel()
    model.ParseFromString((bundled_model() / "saved_model.pb").read_bytes())
    return dict(model.meta_graphs[0].signature_def)


def dims(info):
    return [d.size for d in info.tensor_shape.dim]


def shape_of(value):
    """The shape of nested JSON lists (the first element's, level by level)."""
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return shape


def fits(shape, declared):
    return len(shape) == len(declared) and all(d in (-1, s) for s, d in zip(shape, declared))


def examples():
    found = EXAMPLE.findall(PAGE.read_text(encoding="utf-8"))
    assert found, f"no examples in {PAGE}"
    return found


def test_every_signature_has_its_requests_on_the_page(signatures):
    shown = {(name, form) for name, kind, form, _ in examples() if kind == "request"}
    for name in signatures:
        if name not in ("serving_default", "__saved_model_init_op"):
            assert {(name, "row"), (name, "columnar")} <= shown, name


def test_every_request_is_accepted_for_its_signature(signatures):
    names = {name: sorted(s.inputs, key=list(INPUT_RANKS).index) for name, s in signatures.items()}
    for name, kind, form, body in examples():
        if kind != "request":
            continue
        signature, columns, read_form = parse_request(body, names, 1000)
        assert (signature, read_form) == (name, form)
        for key, rows in columns.items():
            assert len(shape_of(rows)) == len(dims(signatures[name].inputs[key])), (name, key)


def test_every_answer_has_the_signatures_outputs(signatures):
    for name, kind, form, body in examples():
        if kind != "response":
            continue
        outputs = signatures[name].outputs
        answer = json.loads(body)
        rows = answer["predictions"] if form == "row" else [answer["outputs"]]
        for row in rows:
            assert set(row) <= set(outputs), name
            for key, value in row.items():
                shape = shape_of(value)
                declared = dims(outputs[key])
                assert fits([1] + shape if form == "row" else shape, declared), (name, key)


def test_the_signature_table_matches_the_signatures(signatures):
    rows = TABLE_ROW.findall(PAGE.read_text(encoding="utf-8"))
    assert {name for name, _, _ in rows} == set(signatures) - {"__saved_model_init_op"}
    for name, inputs, outputs in rows:
        for text, infos in ((inputs, signatures[name].inputs), (outputs, signatures[name].outputs)):
            written = dict(re.findall(r"`(\w+)` (\[[-\d, ]*\])", text))
            assert set(written) == set(infos), name
            for key, shape in written.items():
                declared = dims(infos[key])
                shown = json.loads(shape)
                assert len(shown) == len(declared), (name, key)
                assert all(-1 in (a, b) or a == b for a, b in zip(shown, declared)), (name, key)
