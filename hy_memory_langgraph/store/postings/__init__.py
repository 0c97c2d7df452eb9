"""The persistent lexical (BM25) index of the memory store: postings per namespace.

* :mod:`.ops`: the operations a batch carries and the results searches return;
* :mod:`.write`: postings kept in step inside the batch's write transaction;
* :mod:`.read`: namespace status, BM25 search and feedback statistics.
"""
