"""The counting stages of `prepare` and of `rank`'s query-log index as an Apache Spark
pipeline, for logs past one machine: `python -m mtn_keras.cluster` writes the same files as
the single-process path (the default), which docs/engine.md compares and explains."""
