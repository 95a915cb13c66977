"""SASL authentication of a connection (KIP-43, KIP-152): ``SaslHandshake`` names the mechanism,
then ``SaslAuthenticate`` carries its exchange. PLAIN (RFC 4616): one message, the user name and
password. SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677; KIP-84): the client's nonce, the
server's salt, iterations and nonce, the client's proof, and the server's signature, which is
checked: a server that does not know the password cannot pass for the cluster.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable

from assignor.errors import ClusterError

__all__ = ["authenticate", "plain_message", "scram_client"]

#: One SaslAuthenticate round trip: the client's bytes out, the server's back.
Exchange = Callable[[bytes], Awaitable[bytes]]


def plain_message(user: str, password: str) -> bytes:
    """PLAIN's one message: no authorization id, the user name, the password."""
    return b"\0" + user.encode("utf-8") + b"\0" + password.encode("utf-8")


def _escaped(user: str) -> str:
    return user.replace("=", "=3D").replace(",", "=2C")


def _attributes(message: bytes, where: str) -> dict[str, str]:
    try:
        text = message.decode("utf-8")
        return dict(part.split("=", 1) for part in text.split(","))
    except (UnicodeDecodeError, ValueError):
        raise ClusterError(f"SASL SCRAM: the broker's {where} message is not SCRAM's") from None


async def scram_client(mechanism: str, user: str, password: str, exchange: Exchange, nonce: str | None = None) -> None:
    """SCRAM's exchange as its client (RFC 5802 section 3), checking the server's signature.

    Raises
    ------
    ClusterError
        The broker refused, answered out of the protocol, or could not prove it knows the
        password.
    """
    digest = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
    nonce = nonce or secrets.token_urlsafe(24)
    first_bare = f"n={_escaped(user)},r={nonce}"
    server_first = await exchange(("n,," + first_bare).encode("utf-8"))
    attributes = _attributes(server_first, "first")
    if "e" in attributes:
        raise ClusterError(f"SASL {mechanism}: the broker refused ({attributes['e']})")
    try:
        server_nonce, salt, iterations = attributes["r"], base64.b64decode(attributes["s"]), int(attributes["i"])
    except (KeyError, ValueError):
        raise ClusterError(f"SASL {mechanism}: the broker's first message lacks its nonce, salt or count") from None
    if not server_nonce.startswith(nonce) or not 0 < iterations <= 1_000_000:
        raise ClusterError(f"SASL {mechanism}: the broker's nonce or iteration count is not SCRAM's")
    salted = hashlib.pbkdf2_hmac(digest().name, password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    stored_key = digest(client_key).digest()
    final_bare = f"c=biws,r={server_nonce}"  # (biws: base64 of "n,,", no channel binding)
    auth_message = ",".join([first_bare, server_first.decode("utf-8"), final_bare]).encode("utf-8")
    signature = hmac.new(stored_key, auth_message, digest).digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode("ascii")
    server_final = _attributes(await exchange(f"{final_bare},p={proof}".encode()), "final")
    if "e" in server_final:
        raise ClusterError(f"SASL {mechanism}: the broker refused ({server_final['e']})")
    server_key = hmac.new(salted, b"Server Key", digest).digest()
    expected = base64.b64encode(hmac.new(server_key, auth_message, digest).digest()).decode("ascii")
    if not hmac.compare_digest(server_final.get("v", ""), expected):
        raise ClusterError(f"SASL {mechanism}: the broker's signature is wrong: it does not know the password")


async def authenticate(mechanism: str, user: str, password: str, exchange: Exchange) -> None:
    """Run `mechanism`'s exchange (after the handshake named it)."""
    if mechanism == "PLAIN":
        await exchange(plain_message(user, password))
    else:
        await scram_client(mechanism, user, password, exchange)
