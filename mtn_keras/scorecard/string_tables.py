"""Every string an export holds, for the safety tests and studies/safety_report.py to judge:
its variables' values and the string constants of its graph. The safety rule's own patterns
(RULE) are constants of the graph, not data: the judges leave them out."""

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from mtn_keras.data import safety

RULE = {
    safety.whole(safety.child_core()),
    safety.whole(safety.explicit_core()),
    safety.innocent_core(),
    safety.information_core(),
}


def export_strings(path: Path) -> Iterator[tuple[str, str]]:
    """(where, text) of every string in the SavedModel at `path`: its variables' values and
    the string constants of its graph and functions."""
    from mtn_keras.base.quiet import import_tensorflow

    tf = import_tensorflow()
    from tensorflow.core.protobuf import saved_model_pb2

    reader = tf.train.load_checkpoint(str(path / "variables" / "variables"))
    for name, dtype in reader.get_variable_to_dtype_map().items():
        if dtype == tf.string:
            for value in np.asarray(reader.get_tensor(name)).ravel():
                yield name, value.decode("utf-8", "replace")
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((path / "saved_model.pb").read_bytes())
    for graph in saved.meta_graphs:
        nodes = list(graph.graph_def.node)
        nodes += [node for f in graph.graph_def.library.function for node in f.node_def]
        for node in nodes:
            if node.op == "Const" and node.attr["dtype"].type == tf.string.as_datatype_enum:
                for value in node.attr["value"].tensor.string_val:
                    yield node.name, value.decode("utf-8", "replace")
