"""Strings in, suggestions out: text normalisation and tokens, prefix rules, candidate encoding,
the suggestion service and the exported SavedModel (see docs/contracts.md)."""
