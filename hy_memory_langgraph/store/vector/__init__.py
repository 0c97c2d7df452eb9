"""The derived vector side of the memory store.

* :mod:`.index`: an exact FAISS index over normalised vectors;
* :mod:`.mirror`: one scope's index with its namespace map;
* :mod:`.scoped`: per-scope indexes of one store object, loaded lazily and replayed
  from the change log;
* :mod:`.cache`: the byte-bounded LRU budget the indexes of all stores share.
"""
