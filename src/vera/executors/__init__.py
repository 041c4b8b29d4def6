"""Executors: where a pass's samples are evaluated, beside the default in-process runner.

`vera.executors.ray` runs a pass on the worker processes of a Ray cluster (the `ray` extra).
Nothing here is imported unless `Settings.executor` chooses it; only `vera.run` imports this
package.
"""
