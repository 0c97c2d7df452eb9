"""The search graph (``client.search``): validate, analyse the query when allowed
(classification, rewrite, time range), hand over to chat search or the productivity search
subgraph. :mod:`.state`, :mod:`.nodes`, :mod:`.graph`."""
