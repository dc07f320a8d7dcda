"""mtn-keras: Multiresolution Transformer Networks for next-query suggestion.

`mtn_keras.load(model)` is the way to call a model from Python (mtn_keras/client/): it and
its types are imported on first use, so `import mtn_keras` stays cheap.
"""

__version__ = "0.1.0"

_CLIENT = ("Answer", "Attention", "SuggestError", "Suggester", "Suggestion", "load")
__all__ = [*_CLIENT, "__version__"]


def __getattr__(name):
    """`mtn_keras.load` and the client's types, imported when first asked for."""
    if name in _CLIENT:
        import mtn_keras.client

        return getattr(mtn_keras.client, name)
    raise AttributeError(f"module 'mtn_keras' has no attribute {name!r}")
