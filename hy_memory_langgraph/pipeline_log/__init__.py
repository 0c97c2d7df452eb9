"""Pipeline logs: what each write and search went through, stage by stage.

* :mod:`.meter`: the per-stage meter that LLM calls and fallbacks report into;
* :mod:`.summary`: what a stage record keeps of a node's output (text only on request);
* :mod:`.store`: the log table (SQLite under the data dir), bounded retention;
* :mod:`.recorder`: buffers a request's stage records, emits them through
  :mod:`logging` and writes those of the requests ended within a second together, in one
  transaction, off the request's path.
"""

from __future__ import annotations
