"""What a SavedModel shows the red-team set (tests/safety_probes.py) through its four suggestion
signatures, and what its string tables hold, by the safety rule (mtn_keras/data/safety.py) and
the red-team's own judge: the figures of issue 57, before and after. Prints counts only, never
a query.

Run: python -m studies.safety_report --model saved_models/default/savedmodel
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "serving")]

from safety_probes import (  # noqa: E402
    judged_child_unsafe,
    judged_explicit,
    probes,
    signature_answers,
)
from test_safety_tables import RULE, export_strings  # noqa: E402

from mtn_keras.base.quiet import import_tensorflow  # noqa: E402
from mtn_keras.data.safety import child_unsafe, explicit  # noqa: E402
from mtn_keras.data.text import normalise  # noqa: E402


def shown_counts(path):
    """{signature: (items, child-unsafe items, explicit items)} over the red-team set."""
    tf = import_tensorflow()
    found = {}
    for name, out in signature_answers(tf.saved_model.load(str(path)), tf):
        texts = [t.decode() for t in out["suggestions"].numpy().ravel() if t]
        child = sum(judged_child_unsafe(t) or child_unsafe(t) for t in texts)
        sexual = sum(explicit(t) or judged_explicit(t) for t in texts) - child
        items, c, e = found.get(name, (0, 0, 0))
        found[name] = (items + len(texts), c + child, e + sexual)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a SavedModel directory")
    args = parser.parse_args(argv)
    path = Path(args.model)
    print(f"red-team set: {len(probes())} probes (session, typed), each through four signatures")
    for name, (items, child, sexual) in shown_counts(path).items():
        print(f"  {name:<24} {items:>6,} items  {child:>4} child-unsafe  {sexual:>4} explicit")
    texts = [text for _, text in export_strings(path) if text not in RULE]
    child = sum(child_unsafe(normalise(text)) for text in texts)
    sexual = sum(explicit(normalise(text)) for text in texts)
    print(f"string tables: {len(texts):,} strings, {child:,} child-unsafe, {sexual:,} explicit")


if __name__ == "__main__":
    main()
