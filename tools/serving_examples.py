"""The request and response examples of docs/serving.md, written from a SavedModel's own
signature definitions (and, for the responses, its answers), so the page says what the export
takes and gives; tests/serving/test_serving_docs.py checks the page against the signatures.

Usage: python tools/serving_examples.py [--model default] > /tmp/examples.md, then paste.
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mtn_keras.cli import add_model_option  # noqa: E402
from mtn_keras.serving.requests import INPUT_RANKS  # noqa: E402
from mtn_keras.serving.rest import response  # noqa: E402
from mtn_keras.serving.savedmodel import resolve  # noqa: E402

# Made-up inputs for one session: two queries, a typed prefix, two earlier queries.
EXAMPLE = {
    "session": ["cheap flights", "rome hotels"],
    "prefix": "rome ",
    "history": ["weather rome", "rome museums"],
}


def signature_defs(path):
    """{name: SignatureDef} of the SavedModel at `path`, read without TensorFlow's runtime."""
    from tensorflow.core.protobuf import saved_model_pb2

    model = saved_model_pb2.SavedModel()
    model.ParseFromString((Path(path) / "saved_model.pb").read_bytes())
    defs = model.meta_graphs[0].signature_def
    return {name: defs[name] for name in sorted(defs) if not name.startswith("__")}


def shape(info):
    """A TensorInfo's shape as the page writes it: [B, S], -1 as a letter."""
    return [d.size for d in info.tensor_shape.dim]


def requests(name, signature):
    """The row and columnar request bodies of `signature` for the EXAMPLE session."""
    names = sorted(signature.inputs, key=list(INPUT_RANKS).index)
    row = {"signature_name": name, "instances": [{key: EXAMPLE[key] for key in names}]}
    columnar = {"signature_name": name, "inputs": {key: [EXAMPLE[key]] for key in names}}
    return row, columnar


def block(marker, body):
    return f"<!-- example: {marker} -->\n```json\n{json.dumps(body, ensure_ascii=False)}\n```\n"


def rounded(value):
    """Floats to 4 decimals, so the page stays readable."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, list):
        return [rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_option(
        parser, "a SavedModel (default: the bundled)", required=False, default="default"
    )
    args = parser.parse_args(argv)
    path = resolve(args.model)
    defs = signature_defs(path)
    print("| signature | inputs | outputs |\n| --- | --- | --- |")
    for name, signature in defs.items():
        inputs = ", ".join(f"`{k}` {shape(v)}" for k, v in sorted(signature.inputs.items()))
        outputs = ", ".join(f"`{k}` {shape(v)}" for k, v in sorted(signature.outputs.items()))
        print(f"| `{name}` | {inputs} | {outputs} |")
    print()
    for name in defs:
        if name == "serving_default":
            continue
        row, columnar = requests(name, defs[name])
        print(f"`{name}`, row form and columnar form:\n")
        print(block(f"{name} request row", row))
        print(block(f"{name} request columnar", columnar))
    from mtn_keras.client.local import SavedModel

    # The signature's own outputs, as a server sends them: the client's backend, not its Answer.
    out = SavedModel(path, ("suggest",)).run("suggest", {"session": [EXAMPLE["session"]]})
    keep = ("suggestions", "scores", "sources", "queries")
    outputs = {key: out[key] for key in keep}
    print("The answer of `suggest` (row form), outputs cut to", ", ".join(keep), ":\n")
    print(block("suggest response row", rounded(response(outputs, "row"))))
    print(block("suggest response columnar", rounded(response(outputs, "columnar"))))


if __name__ == "__main__":
    main()
