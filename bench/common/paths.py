"""Where the benchmark data sets live: ``$HY_BENCH_DATA``, else ``../shared/data`` beside
the repository. They are read in place, never copied in.

* LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
  Agents", 2024), CC BY-NC 4.0: benchmark use only, attribution kept.
* τ-bench airline dialogues (Sierra), MIT.
* BFCL v4 memory (Berkeley Function-Calling Leaderboard, gorilla project), Apache-2.0.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["BFCL_DIR", "DATA_ROOT", "LOCOMO_PATH", "TAU_PATH"]

DATA_ROOT = Path(os.environ.get("HY_BENCH_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
LOCOMO_PATH = DATA_ROOT / "locomo" / "locomo_dev5.json"
TAU_PATH = DATA_ROOT / "tau_bench" / "airline_dev100.json"
BFCL_DIR = DATA_ROOT / "bfcl_v4_memory"
