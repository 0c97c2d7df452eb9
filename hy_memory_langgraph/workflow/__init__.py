"""Workflow memory: user / global / per-workflow dimensions as markdown files, and the
graph that extracts them.

The contract is in ``docs/design.md#workflow-memory``.

One concern per module:

* :mod:`.validation`, :mod:`.credentials`: inputs (and refusing credentials);
* :mod:`.lite`: deterministic extraction rules; :mod:`.routing`: final dimension;
* :mod:`.entries`: the bullet-line format; :mod:`.merge`: dedupe / pending-id completion;
* :mod:`.files`, :mod:`.database`: atomic, locked markdown files (or
  their PostgreSQL table);
* :mod:`.render`, :mod:`.oa_context`: ``memory_prompt`` output;
* :mod:`.graph` (``workflow.memoryExtract``), with :mod:`.state` and :mod:`.nodes`.

The service that runs the graph and renders prompts is
:mod:`hy_memory_langgraph.client.workflow` (the client layer), the command line's
``workflow run`` is :mod:`hy_memory_langgraph.cli.workflow`.
"""
