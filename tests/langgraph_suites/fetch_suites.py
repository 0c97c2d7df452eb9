"""Fetch LangGraph's own store test modules for the installed store packages.

``langgraph-checkpoint-sqlite`` and ``langgraph-checkpoint-postgres`` publish their test
suites only in their source distributions. This script downloads the sdist of the
*installed* version of each from the package registry (``pip download``) and unpacks
its ``tests/`` folder and ``pyproject.toml`` under ``DEST/<package>/`` (default:
``.cache/langgraph-suites`` at the repository root, git-ignored). The test module
``test_langgraph_store_suites.py`` then runs them against ``HyMemoryStore``; nothing
of them is kept in this repository. ``.ci/run`` calls it before the tests::

    python tests/langgraph_suites/fetch_suites.py
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres")
DEFAULT_DEST = Path(__file__).resolve().parents[2] / ".cache" / "langgraph-suites"


def suite_dir(dest: Path, package: str) -> Path:
    """Where the suite of ``package``'s installed version is (or would be) unpacked."""
    return dest / f"{package}-{version(package)}"


def fetch(package: str, dest: Path) -> Path:
    """Download and unpack the tests of the installed ``package`` under the existing
    folder ``dest``; returns their folder."""
    target = suite_dir(dest, package)
    if (target / "tests").is_dir():
        return target
    pinned = f"{package}=={version(package)}"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--no-binary", ":all:", pinned, "-d", tmp], check=True)
        (archive,) = Path(tmp).glob("*.tar.gz")
        staging = Path(tempfile.mkdtemp(dir=dest))  # beside the target: the rename stays on one disk
        with tarfile.open(archive) as tar:
            wanted = [m for m in tar.getmembers()
                      if m.isfile() and _keep(m.name.split("/", 1)[-1])]
            tar.extractall(staging, members=wanted, filter="data")
        (root,) = staging.iterdir()
        root.rename(target)
        staging.rmdir()
    return target


def _keep(relative: str) -> bool:
    return relative == "pyproject.toml" or relative.startswith("tests/")


def main(argv: list[str]) -> int:
    dest = Path(argv[0]) if argv else DEFAULT_DEST
    dest.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        try:
            print(f"{package}: {fetch(package, dest)}")
        except PackageNotFoundError:
            print(f"{package} is not installed: run pip install -e '.[test]' first", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
