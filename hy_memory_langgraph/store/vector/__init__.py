"""The derived vector side of the memory store.

* :mod:`.settings`: the approximate-search settings and the id layout (no NumPy: a
  store without an index loads only these and :mod:`.cache`, :mod:`.targets`);
* :mod:`.targets`: what a search ranks, chosen in SQL;
* :mod:`.index`: an exact FAISS index over normalised vectors;
* :mod:`.mirror`: one scope's index with its namespace map;
* :mod:`.scoped`: per-scope indexes of one store object, loaded lazily and replayed
  from the change log;
* :mod:`.cache`: the byte-bounded LRU budget the indexes of all stores share.
"""
