"""Workflow memory documents: user / global / per-workflow dimensions as markdown files.

The contract is in ``docs/design.md#workflow-memory``.

One concern per module:

* :mod:`.validation`, :mod:`.credentials`: inputs (and refusing credentials);
* :mod:`.lite`: deterministic extraction rules; :mod:`.routing`: final dimension;
* :mod:`.entries`: the bullet-line format; :mod:`.merge`: dedupe / pending-id completion;
* :mod:`.files`, :mod:`.locking`: atomic, locked markdown files;
* :mod:`.render`, :mod:`.oa_context`: ``memory_prompt`` output.

The extraction graph lives in :mod:`hy_memory_langgraph.flows.workflow.graph`, the
service that runs it in :mod:`hy_memory_langgraph.client.workflow`, the CLI mirror in
:mod:`hy_memory_langgraph.cli.workflow`.
"""
