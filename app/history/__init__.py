"""The searcher's history: the SQLite store, how it is opened, what is never stored, its
files (import, export) and the app's control of it. Plain Python, no widgets."""
