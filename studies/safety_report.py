"""What a SavedModel shows the red-team set (mtn_keras/scorecard/redteam.py) through its four
suggestion signatures, and what its string tables hold, by the safety rule
(mtn_keras/data/safety.py) and the red-team's own judge: figures to compare before and after a
change of the rule. Prints counts only, never a query.

Run: python -m studies.safety_report --model saved_models/default/savedmodel
"""

import argparse
from pathlib import Path

from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.data.safety import child_unsafe, explicit
from mtn_keras.data.text import normalise
from mtn_keras.scorecard.redteam import (
    judged_child_unsafe,
    judged_explicit,
    probes,
    signature_answers,
)
from mtn_keras.scorecard.string_tables import RULE, export_strings


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
