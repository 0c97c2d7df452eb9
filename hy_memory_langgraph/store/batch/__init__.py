"""One batch of LangGraph store operations, from plan to result.

* :mod:`.plan`: validate and plan the operations before touching storage;
* :mod:`.guards`: checks that make a write conditional on what was read;
* :mod:`.writes`: every change of the batch in one transaction;
* :mod:`.reads`: the searches of a batch, exact and filter first.
"""
