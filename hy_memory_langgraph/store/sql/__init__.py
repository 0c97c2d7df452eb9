"""SQL of the memory store, bind parameters only.

* :mod:`.statements`: the store's statements;
* :mod:`.filters`: the search filter language compiled to expressions;
* :mod:`.json_fields`: dialect-specific access to fields inside the JSON value.
"""
