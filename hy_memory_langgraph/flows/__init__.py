"""The memory graphs, one package per graph family: its state schema, its nodes and its
``StateGraph`` builder together, so a flow reads top to bottom in one folder.

* :mod:`.write`: ``client.add``: validate, route (scene judge), hand over to a family;
* :mod:`.search`: ``client.search``: validate, analyse the query, hand over to a family;
* :mod:`.chat`: the chat write subgraph and the chat search node;
* :mod:`.productivity`: the dual-layer write and search of working and coding memory,
  with the coding version chain.

(Workflow-memory extraction is a graph of its own, in :mod:`hy_memory_langgraph.workflow`.)

:mod:`.contracts` holds what the routing graphs hand to the families (``PreparedWrite``,
``PreparedSearch``) and what they return (``ResultOutput``);
:mod:`hy_memory_langgraph.services.stages` wraps nodes so each records its pipeline-log
stage; :mod:`.diagrams` draws every compiled graph. Nodes take ``runtime: Runtime[MemoryContext]``
and return partial state updates.
"""
