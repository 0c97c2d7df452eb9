"""Record layouts over a LangGraph ``BaseStore``: where each kind of memory lives.

* :mod:`.records`: the record dataclasses; :mod:`.base`: the mechanics every repository
  shares (id index, history, guarded one-batch changes, deletes);
* :mod:`.chat`, :mod:`.productivity`, :mod:`.trace`: the repositories; :mod:`.chat_terms`:
  the terms a chat memory is found by (its lexical document);
* :mod:`.filters`: store filters over record fields; :mod:`.namespaces`: safe labels.
"""

from __future__ import annotations
