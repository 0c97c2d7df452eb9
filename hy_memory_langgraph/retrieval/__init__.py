"""Ranking building blocks shared by the search nodes: tokenizer, BM25, fusion.

Pure code over texts, scores and ids; no store access, no models.
"""

from __future__ import annotations
