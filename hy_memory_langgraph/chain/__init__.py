"""Coding version-evolution chain (``docs/design.md#coding-version-chain``): zero LLM, zero embedding.

A *thread* is one function / block of one file on one branch of one owner
(``"user_id|workspace_id"``); a *round* is one revision of it, numbered 1, 2, 3…, with
the user's words that asked for it, the changed lines and the time.

Modules (arrows point down):

* :mod:`.diffs`: patch text → hunks (unified / git diffs, ``apply_patch``, line diffs);
* :mod:`.symbols`: the enclosing function of a hunk;
* :mod:`.edits`: a trace → edits (diff text, tool-call arguments; failed calls dropped);
* :mod:`.rounds`: edits of one write → one round per thread; revert detection;
* :mod:`.store`: SQLAlchemy tables in ``hy_code_chain/hy_code.db``;
* :mod:`.git`: edits read from ``MEMORY_CODING_CHAIN_REPO_ROOT`` (best effort);
* :mod:`.render`: recalled facts → threads → ``chain_block`` / ``chain_used``.

The graph nodes using them live in :mod:`hy_memory_langgraph.flows.productivity.chain`.
"""
