"""The signatures' outputs, named once: each output's dtype and the names of its dimensions.
The graph answers an empty batch and joins its chunks from this table (inputs.py), the
client reads which outputs a signature has, and the REST server which axes to cut back to a
request's queries (batching.py). No TensorFlow here: the server's batching reads it too."""

from typing import TypeAlias

# A table of outputs: each output's dtype and the names of its dimensions, by output name.
OutputTable: TypeAlias = dict[str, tuple[str, tuple[str, ...]]]

# Every output of `suggest` and `complete`: dtype and shape, by size name. `batch` is B,
# `k` the number of suggestions, `slots` S' (the session's query slots), `n` the tokens of
# a query, `layers` and `heads` those of the session attention. An empty batch is answered
# from this table, so a new output is added here.
SUGGEST_OUTPUTS: OutputTable = {
    "suggestions": ("string", ("batch", "k")),
    "scores": ("float32", ("batch", "k")),
    "sources": ("string", ("batch", "k")),
    "copy_attention": ("float32", ("batch", "k", "slots", "n")),
    "source_tokens": ("string", ("batch", "slots", "n")),
    "session_attention": ("float32", ("batch", "layers", "heads", "slots", "slots")),
    "queries": ("string", ("batch", "slots")),
}
# The further outputs of `suggest_with_history` and `complete_with_history`: the kept
# history (`history` entries, HistoryLookup.kept) and how much each entry counted.
HISTORY_OUTPUTS: OutputTable = {
    "history": ("string", ("batch", "history")),
    "history_attention": ("float32", ("batch", "history")),
}
# The outputs of `session_attention`: `suggest`'s, renamed.
ATTENTION_OUTPUTS: OutputTable = {
    "attention": SUGGEST_OUTPUTS["session_attention"],
    "queries": SUGGEST_OUTPUTS["queries"],
}
# Which axes of each output count the session's query slots (S').
SLOT_AXES = {
    name: tuple(axis for axis, size in enumerate(dims) if size == "slots")
    for name, (_, dims) in (SUGGEST_OUTPUTS | HISTORY_OUTPUTS | ATTENTION_OUTPUTS).items()
    if "slots" in dims
}
