"""Node functions of the memory graphs, one package per graph family.

* :mod:`.routing`: validation and scene choice of ``add`` / ``search`` (and their states);
* :mod:`.chat`: the chat write subgraph and hybrid chat search;
* :mod:`.productivity`: the dual-layer write, search and version chain of the
  productivity scenes;
* :mod:`.workflow`: workflow-memory extraction;
* :mod:`.context`: the run-time context every node receives; :mod:`.llm`,
  :mod:`.parsing`, :mod:`.results`: shared helpers.

Nodes take ``runtime: Runtime[MemoryContext]`` and return partial state updates.
"""
