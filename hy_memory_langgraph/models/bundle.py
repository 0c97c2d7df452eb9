"""Write the calibrations shipped with the package (the embedded default model's).

Usage::

    python -m hy_memory_langgraph.models.bundle > hy_memory_langgraph/models/calibrations.json

Run it again when the embedded model or the reference sample changes; a test compares
the file with a fresh measurement.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from hy_memory_langgraph.models.calibration import cache_key, calibrate
from hy_memory_langgraph.models.embeddings import E5Embeddings


def _bundle_text() -> str:
    """The text of ``calibrations.json``, measured now with the embedded model."""
    emb = E5Embeddings()
    return json.dumps({cache_key(emb): asdict(calibrate(emb))}, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(_bundle_text(), end="")
