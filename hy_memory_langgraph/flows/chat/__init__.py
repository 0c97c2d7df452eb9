"""Chat memory: the pro write subgraph (extract, candidates, reconcile, apply; the raw
turns when extraction fails), the lite ``store_turns`` node and the hybrid ``chat_search``
node. :mod:`.state`, :mod:`.nodes`, :mod:`.retrieval`, :mod:`.graph`."""
