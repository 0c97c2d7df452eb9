"""Public key material by its shape: what no secret span may touch.

A public key is meant to be shared, and it looks random: a label before it ("my public key:",
"mein öffentlicher Schlüssel:", ``STRIPE_PUBLISHABLE_KEY=``) would otherwise take it for a
secret. These shapes are found first and protected, as placeholders are:

* an OpenSSH public key line: its algorithm (``ssh-ed25519``, ``ssh-rsa``, ``ecdsa-sha2-nistp256``,
  ``sk-ssh-ed25519@openssh.com`` …) and its base64 blob;
* PEM blocks of public material: ``PUBLIC KEY``, ``RSA PUBLIC KEY``, ``CERTIFICATE``,
  ``CERTIFICATE REQUEST``, ``X509 CRL``, ``PGP PUBLIC KEY BLOCK``, ``SSH2 PUBLIC KEY``;
* keys vendors publish by design: Stripe's publishable ``pk_live_``/``pk_test_``, Supabase's
  ``sb_publishable_``, Langfuse's ``pk-lf-``, age recipients (``age1…``), Bitcoin extended
  public keys (``xpub``/``ypub``/``zpub``…), Nostr ``npub1…``.

Example:
    >>> text = "my public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl bob@x"
    >>> [text[s:e].split()[0] for s, e in public_spans(text)]
    ['ssh-ed25519']
"""

from __future__ import annotations

import re
from typing import Final

_PUBLIC: Final = re.compile(
    r"(?<![\w-])(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(?:256|384|521)"
    r"|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com|ssh-rsa-cert-v01@openssh\.com"
    r"|ssh-ed25519-cert-v01@openssh\.com)[ \t]+AAAA[A-Za-z0-9+/]{20,}={0,3}"
    r"|-{5}BEGIN (?P<block>PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST"
    r"|X509 CRL|TRUSTED CERTIFICATE|PGP PUBLIC KEY BLOCK|SSH2 PUBLIC KEY)-{5}[\s\S]{0,20000}?-{5}END (?P=block)-{5}"
    r"|(?<![\w-])(?:pk_(?:live|test)_[A-Za-z0-9]{16,}|sb_publishable_[A-Za-z0-9_-]{16,}"
    r"|pk-lf-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|age1[02-9ac-hj-np-z]{58}|npub1[02-9ac-hj-np-z]{58}"
    r"|[xyzXYZtuv]pub[1-9A-HJ-NP-Za-km-z]{100,112})(?![\w-])")
#: Texts without one of these hold none of the shapes.
_NEEDLES: Final = ("AAAA", "BEGIN ", "pk_", "sb_publishable_", "pk-lf-", "age1", "npub1", "pub")


def public_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each public key, certificate or publishable key in ``text``."""
    if not any(needle in text for needle in _NEEDLES):
        return []
    return [(m.start(), m.end()) for m in _PUBLIC.finditer(text)]
