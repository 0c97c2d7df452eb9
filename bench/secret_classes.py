"""Secret detection by class: recall and precision on the generated class corpus.

``bench/common/secret_classes.py`` generates, from each class's description, secrets with
random bodies and near misses (texts of the same class holding none) in many languages,
split into a development part and a held-out part by template and by language before any
rule was written. Each sample's messages go through the write path's redaction
(:func:`~hy_memory_langgraph.messages.redaction.redact_messages`, neighbouring messages read
together); a secret is kept off disk when none of its needles is left, a near miss is
kept when every message is unchanged. With ``--e2e`` the secrets are also written through
a real client (lite mode) and every file under its data dir is read byte for byte.

Usage::

    python -m bench.secret_classes [--part dev|heldout|fresh|both|all] [--round 1|2|3] [--show N] [--e2e]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from bench.common.secret_classes import CLASSES, NEAR_CLASSES, Sample, build_samples
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.redaction import redact_messages

__all__ = ["caught", "kept", "measure"]


def _redacted(sample: Sample) -> list[str]:
    msgs = normalize_messages([{"role": "user", "content": m} for m in sample.messages])
    return [m.content for m in redact_messages(msgs)]


def caught(sample: Sample) -> bool:
    """Whether no needle of a secret sample is left after redaction."""
    out = "\n".join(_redacted(sample))
    return not any(n in out for n in sample.needles)


def kept(sample: Sample) -> bool:
    """Whether a near miss comes out of redaction as written."""
    return _redacted(sample) == list(sample.messages)


def measure(samples: list[Sample]) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """Per ``(class, part)``: secrets caught, secrets, near misses kept, near misses."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for sample in samples:
        key = (sample.cls, sample.part)
        if sample.secret:
            counts[(*key, "secrets")] += 1
            counts[(*key, "caught")] += caught(sample)
        else:
            counts[(*key, "near")] += 1
            counts[(*key, "kept")] += kept(sample)
    keys = {(c, p) for c, p, _ in counts}
    return {k: (counts[(*k, "caught")], counts[(*k, "secrets")], counts[(*k, "kept")], counts[(*k, "near")])
            for k in keys}


#: Shortest needle the end-to-end check looks for: three or four digits (a PIN, a card's
#: code) turn up by chance in megabytes of index files.
MIN_E2E_NEEDLE = 6


def _e2e_leaks(samples: list[Sample]) -> list[Sample]:
    """The secret samples some file holds after writing each through a client (lite mode)."""
    from bench.secret_scan import files_holding
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.testing import HashingEmbeddings

    secrets = [s for s in samples if s.secret]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with HyMemoryClient(mode="lite", data_dir=root, embeddings=HashingEmbeddings(dims=32)) as client:
            for number, sample in enumerate(secrets):
                client.add([{"role": "user", "content": m} for m in sample.messages], user_id=f"u{number}")
            found = files_holding(root, [n for s in secrets for n in s.needles])
        found |= files_holding(root, [n for s in secrets for n in s.needles])
    return [s for s in secrets if found.intersection(s.needles)]


def _row(name: str, figures: tuple[int, int, int, int]) -> str:
    got, total, kept_, near = figures
    recall = f"{got:>4} / {total:<4} {got / total:.3f}" if total else " " * 17
    precision = f"{kept_:>3} / {near:<3}" if near else ""
    return f"  {name:<21} {recall}   {precision}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("dev", "heldout", "fresh", "both", "all"), default="both")
    parser.add_argument("--show", type=int, default=0, help="print up to N misses and altered near misses per class")
    parser.add_argument("--e2e", action="store_true", help="also write the secrets through a client, read the files")
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--round", choices=("1", "2", "3"), help="only one round's templates")
    args = parser.parse_args()
    samples = build_samples(seed=args.seed)
    if args.round:
        tags = {"1": "", "2": "/r2/", "3": "/r3/"}
        samples = [s for s in samples
                   if next((r for r in ("2", "3") if tags[r] in s.template), "1") == args.round]
    parts = {"both": ("dev", "heldout"), "all": ("dev", "heldout", "fresh")}.get(args.part, (args.part,))
    figures = measure([s for s in samples if s.part in parts])
    for part in parts:
        print(f"{part}: class, secrets kept off disk, near misses kept as written")
        total = [0, 0, 0, 0]
        for cls in (*CLASSES, "general", *NEAR_CLASSES):
            row = figures.get((cls, part))
            if row:
                print(_row(cls, row))
                total = [a + b for a, b in zip(total, row)]
        print(_row("all", tuple(total)))  # type: ignore[arg-type]
        if args.show:
            for cls in (*CLASSES, "general", *NEAR_CLASSES):
                mine = [s for s in samples if s.cls == cls and s.part == part]
                bad = [s for s in mine if (s.secret and not caught(s)) or (not s.secret and not kept(s))]
                for sample in bad[:args.show]:
                    what = "missed" if sample.secret else "altered"
                    print(f"    {what} {sample.template} [{sample.lang}]: {' / '.join(sample.messages)[:150]!r}"
                          + ("" if sample.secret else f" -> {' / '.join(_redacted(sample))[:150]!r}"))
    if args.e2e:
        chosen = [s for s in samples if s.part in parts and s.secret
                  and min(map(len, s.needles)) >= MIN_E2E_NEEDLE]
        leaks = _e2e_leaks(chosen)
        print(f"end to end (lite client, every file read; needles of {MIN_E2E_NEEDLE}+ characters): "
              f"{len(chosen) - len(leaks)} / {len(chosen)} secrets in no file")


if __name__ == "__main__":
    main()
