"""How to reach a cluster: Kafka's client properties, by Kafka's names, as its tools take them
(``--command-config client.properties``).

Read here: ``bootstrap.servers``, ``security.protocol`` (``PLAINTEXT``, ``SSL``,
``SASL_PLAINTEXT``, ``SASL_SSL``), ``sasl.mechanism`` (``PLAIN``, ``SCRAM-SHA-256``,
``SCRAM-SHA-512``) with the user name and password of ``sasl.jaas.config`` (Kafka's
``PlainLoginModule`` / ``ScramLoginModule`` options), the PEM
forms of the trust and key stores (KIP-651: ``ssl.truststore.type=PEM`` with
``ssl.truststore.location`` or ``ssl.truststore.certificates``; ``ssl.keystore.type=PEM`` with
``ssl.keystore.location`` or ``ssl.keystore.certificate.chain`` and ``ssl.keystore.key``,
``ssl.key.password``), ``ssl.endpoint.identification.algorithm`` (empty: no host name check),
``client.id``, ``request.timeout.ms`` and ``default.api.timeout.ms``. A JKS or PKCS12 store, or
another SASL mechanism (GSSAPI, OAUTHBEARER), is refused with what to do instead; other
properties (a producer's, say) are ignored and named in `ClientSettings.ignored`.
"""

from __future__ import annotations

import re
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assignor.errors import ClusterError

__all__ = ["MECHANISMS", "ClientSettings", "read_properties", "settings_of"]

#: The properties read here (module docstring).
KNOWN = ("bootstrap.servers", "security.protocol", "ssl.truststore.type", "ssl.truststore.location",
         "ssl.truststore.certificates", "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.certificate.chain",
         "ssl.keystore.key", "ssl.key.password", "ssl.endpoint.identification.algorithm", "client.id",
         "request.timeout.ms", "default.api.timeout.ms", "sasl.mechanism", "sasl.jaas.config")
#: The SASL mechanisms a snapshot authenticates with (`assignor.cluster.sasl`).
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_MAX_MS = 86_400_000


@dataclass(frozen=True)
class ClientSettings:
    """A cluster's address and connection settings, checked."""

    bootstrap: tuple[tuple[str, int], ...]
    client_id: str = "assignor-snapshot"
    request_timeout_ms: int = 30_000
    api_timeout_ms: int = 60_000
    tls: ssl.SSLContext | None = None
    #: (mechanism, user name, password) under SASL, else None.
    sasl: tuple[str, str, str] | None = field(default=None, repr=False)
    #: Properties given that a snapshot does not read.
    ignored: tuple[str, ...] = ()
    #: How the cluster is named in messages (its bootstrap servers, or the service's alias).
    name: str = field(default="")

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", ",".join(f"{host}:{port}" for host, port in self.bootstrap))


def read_properties(path: str | Path) -> dict[str, str]:
    """A ``.properties`` file as Kafka's tools read one (``key=value`` or ``key: value`` per
    line, ``#`` and ``!`` comments); a line continued with a trailing backslash is joined."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ClusterError(f"--command-config {path}: cannot read it ({error})") from None
    properties: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if cut <= 0:
            raise ClusterError(f"--command-config {path}: {raw.strip()!r} is not key=value")
        properties[line[:cut].strip()] = line[cut + 1 :].strip()
    return properties


def settings_of(bootstrap: str | None, properties: Mapping[str, str] | None = None, name: str = "") -> ClientSettings:
    """`ClientSettings` from a ``--bootstrap-server`` value and client properties (either may
    give the servers; the flag wins).

    Raises
    ------
    ClusterError
        Naming the property that cannot be used, and why.
    """
    properties = dict(properties or {})
    servers = bootstrap or properties.get("bootstrap.servers", "")
    if not servers.strip():
        raise ClusterError("bootstrap.servers: give --bootstrap-server HOST:PORT (or bootstrap.servers in the "
                           "client properties)")
    addresses = tuple(_address(server.strip()) for server in servers.split(",") if server.strip())
    protocol = properties.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ClusterError(f"security.protocol={protocol}: expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
    tls = _tls(properties) if protocol.endswith("SSL") else None
    sasl = _sasl(properties) if protocol.startswith("SASL") else None
    return ClientSettings(addresses, client_id=properties.get("client.id", "assignor-snapshot"),
                          request_timeout_ms=_ms(properties, "request.timeout.ms", 30_000),
                          api_timeout_ms=_ms(properties, "default.api.timeout.ms", 60_000), tls=tls, sasl=sasl,
                          ignored=tuple(sorted(set(properties) - set(KNOWN))), name=name)


def _sasl(properties: Mapping[str, str]) -> tuple[str, str, str]:
    """The mechanism, user name and password: ``sasl.mechanism`` (Kafka's default is GSSAPI,
    which is not read here: name one) and ``sasl.jaas.config``'s ``username`` and ``password``."""
    mechanism = properties.get("sasl.mechanism", "GSSAPI").upper()
    if mechanism not in MECHANISMS:
        raise ClusterError(f"sasl.mechanism={mechanism}: the snapshot authenticates with {', '.join(MECHANISMS)}; "
                           "set sasl.mechanism to one of them (GSSAPI and OAUTHBEARER are not supported)")
    jaas = properties.get("sasl.jaas.config", "")
    options = {key: re.sub(r"\\(.)", r"\1", value) for key, value in re.findall(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"',
                                                                               jaas)}
    if "username" not in options or "password" not in options:
        raise ClusterError('sasl.jaas.config: expected a login module with username="..." password="..."')
    return mechanism, options["username"], options["password"]


def _address(server: str) -> tuple[str, int]:
    host, _, port = server.rpartition(":")
    host = host.strip("[]")  # an IPv6 literal, [::1]:9092
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterError(f"bootstrap.servers: {server!r} is not HOST:PORT")
    return host, int(port)


def _ms(properties: Mapping[str, str], name: str, default: int) -> int:
    text = properties.get(name)
    if text is None:
        return default
    if not text.isdigit() or not 0 < int(text) <= _MAX_MS:
        raise ClusterError(f"{name}={text}: expected milliseconds in [1, {_MAX_MS}]")
    return int(text)


def _tls(properties: Mapping[str, str]) -> ssl.SSLContext:
    for store in ("truststore", "keystore"):
        kind = properties.get(f"ssl.{store}.type", "PEM").upper()
        if kind != "PEM" and (f"ssl.{store}.location" in properties):
            raise ClusterError(f"ssl.{store}.type={kind}: only PEM stores are read here (KIP-651); convert it, "
                               f"e.g. `keytool -exportcert -rfc` or `openssl pkcs12 -nodes`")
    context = ssl.create_default_context()
    if properties.get("ssl.endpoint.identification.algorithm", "https") == "":
        context.check_hostname = False
    try:
        if "ssl.truststore.location" in properties:
            context.load_verify_locations(cafile=properties["ssl.truststore.location"])
        if "ssl.truststore.certificates" in properties:
            context.load_verify_locations(cadata=properties["ssl.truststore.certificates"])
        password = properties.get("ssl.key.password")
        if "ssl.keystore.location" in properties:
            context.load_cert_chain(properties["ssl.keystore.location"], password=password)
        elif "ssl.keystore.certificate.chain" in properties:
            with tempfile.NamedTemporaryFile("w", suffix=".pem") as pem:  # ssl reads chains from files only
                pem.write(properties["ssl.keystore.certificate.chain"] + "\n" + properties.get("ssl.keystore.key", ""))
                pem.flush()
                context.load_cert_chain(pem.name, password=password)
    except (OSError, ssl.SSLError, ValueError) as error:
        raise ClusterError(f"ssl: cannot load the trust or key store ({error})") from None
    return context
