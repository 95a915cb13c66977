"""One connection to one broker: Kafka's framing (an INT32 size, then the message), request
headers v1 and v2 and response headers v0 and v1 (``RequestHeader.json``, ``ResponseHeader.json``;
v2/v1 for flexible APIs, except ApiVersions' response, always v0), one request in flight at a
time, each under ``request.timeout.ms``. On opening it asks the broker which versions of each
API it serves (ApiVersions v0) and sends each request at the highest both sides know
(`assignor.wire.admin.Api`).
"""

from __future__ import annotations

import asyncio
import ssl
import struct
from typing import Any

from assignor.cluster.sasl import authenticate
from assignor.cluster.settings import ClientSettings
from assignor.errors import ClusterError, ProtocolError
from assignor.wire import codec, compiled
from assignor.wire.admin import API_VERSIONS, SASL_AUTHENTICATE, SASL_HANDSHAKE, Api
from assignor.wire.error_codes import error_name

__all__ = ["MAX_RESPONSE_BYTES", "RETRIABLE", "Connection"]

#: The largest response read (DescribeGroups of a group of 2,000 members holding a million
#: partitions is about 20 MB): a size past it is refused before anything is allocated.
MAX_RESPONSE_BYTES = 512 * 1024 * 1024

#: Errors that clear when asked again (a coordinator loading or moving).
RETRIABLE = {14, 15, 16}


_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhih")  # api key, api version, correlation id, client id's length


class Connection:
    """A connection to the broker at `address` (`open`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, settings: ClientSettings,
                 address: tuple[str, int]) -> None:
        self.reader, self.writer, self.settings, self.address = reader, writer, settings, address
        self.versions: dict[int, tuple[int, int]] = {}
        self._correlation = 0
        self._lock = asyncio.Lock()
        self._data = b""  # the last response read

    @classmethod
    async def open(cls, host: str, port: int, settings: ClientSettings) -> Connection:
        """Connect (TLS when the settings say so) and learn the broker's API versions.

        Raises
        ------
        ClusterError
            Naming the cluster and the broker: it cannot be reached, or did not answer in time.
        """
        timeout = settings.request_timeout_ms / 1000
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=settings.tls, server_hostname=host if settings.tls else None,
                                        limit=2**20),
                timeout)
        except (OSError, TimeoutError) as error:
            raise ClusterError(f"cluster {settings.name}: cannot connect to {host}:{port} "
                               f"({_why_not_connected(error, settings)})") from None
        connection = cls(reader, writer, settings, (host, port))
        try:
            answer = await connection.send(API_VERSIONS, {})
        except ClusterError:
            connection.close()
            raise
        if answer["error_code"] != 0:
            connection.close()
            raise ClusterError(f"cluster {settings.name}: {host}:{port} refused ApiVersions (error "
                               f"{answer['error_code']}); is it a Kafka broker?")
        connection.versions = {key: (low, high) for key, low, high in answer["api_keys"]}
        if settings.sasl is not None:
            try:
                await connection._authenticate(*settings.sasl)
            except ClusterError:
                connection.close()
                raise
        return connection

    async def _authenticate(self, mechanism: str, user: str, password: str) -> None:
        """SaslHandshake, then the mechanism's exchange over SaslAuthenticate (`assignor.cluster.sasl`)."""
        host, port = self.address
        where = f"cluster {self.settings.name}: {host}:{port}"
        answer = await self.send(SASL_HANDSHAKE, {"mechanism": mechanism})
        if answer["error_code"] != 0:
            raise ClusterError(f"{where} does not take SASL {mechanism} (it takes {', '.join(answer['mechanisms'])})")

        async def exchange(message: bytes) -> bytes:
            reply = await self.send(SASL_AUTHENTICATE, {"auth_bytes": message})
            if reply["error_code"] != 0:
                raise ClusterError(f"{where} refused SASL {mechanism} for {user!r}: "
                                   f"{reply['error_message'] or error_name(reply['error_code'])}")
            auth_bytes: bytes = reply["auth_bytes"]
            return auth_bytes

        await authenticate(mechanism, user, password, exchange)

    def version_of(self, api: Api) -> int:
        """The version `api` is sent at: the highest the broker and `api` both know.

        Raises
        ------
        ClusterError
            When the broker serves none of them (an older Kafka).
        """
        if api is API_VERSIONS:
            return api.version
        low, high = self.versions.get(api.key, (0, -1))
        version = min(high, api.version)
        if version < max(low, api.lowest):
            host, port = self.address
            raise ClusterError(f"cluster {self.settings.name}: the broker at {host}:{port} does not serve {api.name} "
                               f"v{api.lowest}-{api.version} (it serves v{low}-{high}); Kafka 3.7 or later is "
                               "needed" + (" with the consumer protocol (KIP-848) enabled" if api.key == 69 else ""))
        return version

    async def send(self, api: Api, values: dict[str, Any]) -> dict[str, Any]:
        """Send one request and read its response's values by field name.

        Raises
        ------
        ClusterError
            The connection broke, the answer did not come within ``request.timeout.ms``, or
            its bytes are not the response (naming the field).
        """
        version = self.version_of(api)
        client = self.settings.client_id.encode("utf-8")
        async with self._lock:
            self._correlation = (self._correlation + 1) % 2**31
            correlation = self._correlation
            header = _HEADER.pack(api.key, version, correlation, len(client)) + client
            if api.request.flexible:
                header += b"\0"  # request header v2: no tagged fields
            body = codec.encode(api.request, values, version)
            host, port = self.address
            try:
                self.writer.write(_SIZE.pack(len(header) + len(body)) + header + body)
                await asyncio.wait_for(self._answer(api), self.settings.request_timeout_ms / 1000)
                data = self._data
            except TimeoutError:
                self.close()
                raise ClusterError(f"cluster {self.settings.name}: {host}:{port} did not answer {api.name} within "
                                   f"request.timeout.ms ({self.settings.request_timeout_ms})") from None
            except _NotKafka as error:
                self.close()
                raise ClusterError(f"cluster {self.settings.name}: {host}:{port} {error}") from None
            except asyncio.IncompleteReadError as error:
                self.close()
                if api is API_VERSIONS and not error.partial and self.settings.tls is None:
                    # (what a TLS listener does with a request in the clear)
                    raise ClusterError(f"cluster {self.settings.name}: {host}:{port} closed the connection without "
                                       "answering ApiVersions: a TLS listener (security.protocol=SSL or SASL_SSL "
                                       "in --command-config), or not a Kafka broker") from None
                raise ClusterError(f"cluster {self.settings.name}: the connection to {host}:{port} broke during "
                                   f"{api.name} ({error})") from None
            except OSError as error:
                self.close()
                refused = _client_certificate_refused(error)
                raise ClusterError(f"cluster {self.settings.name}: the connection to {host}:{port} broke during "
                                   f"{api.name} ({refused or error or 'closed'})") from None
        try:
            got, offset = _response_header(data, flexible=api.response.flexible)
            if got != correlation:
                raise ProtocolError(f"correlation id {got}, expected {correlation}")
            return compiled.decode(api.response, data[offset:], version)
        except ProtocolError as error:
            self.close()
            raise ClusterError(f"cluster {self.settings.name}: {host}:{port} answered {api.name} v{version} with "
                               f"bytes that are not its response ({error})") from None

    async def _answer(self, api: Api) -> None:
        await self.writer.drain()
        head = await self.reader.readexactly(4)
        if api is API_VERSIONS:  # the first answer of a port: is it Kafka's protocol at all?
            _check_kafka(head)
        size = _SIZE.unpack(head)[0]
        if not 0 <= size <= MAX_RESPONSE_BYTES:
            raise OSError(f"a response of {size} bytes, past the {MAX_RESPONSE_BYTES} read")
        self._data = await self.reader.readexactly(size)

    def close(self) -> None:
        self.writer.close()


#: OpenSSL's verify codes for a certificate of another host name or address (X509_V_ERR_HOSTNAME_MISMATCH,
#: X509_V_ERR_IP_ADDRESS_MISMATCH).
_NAME_MISMATCH = (62, 64)


def _why_not_connected(error: OSError | TimeoutError, settings: ClientSettings) -> str:
    """The reason a connection was not made, in words, with the cure where TLS is at fault."""
    if isinstance(error, TimeoutError):
        return "no answer within request.timeout.ms"
    if isinstance(error, ssl.SSLCertVerificationError):
        if error.verify_code in _NAME_MISMATCH:
            return f"{error.verify_message} ssl.endpoint.identification.algorithm= (empty) turns the check off, " \
                   "as Kafka's clients do"
        return f"{error.verify_message}: ssl.truststore.location names the CA that signed the broker's certificate"
    refused = _client_certificate_refused(error)
    if refused is not None:
        return refused
    if settings.tls is not None and (isinstance(error, ssl.SSLError | ConnectionResetError | ConnectionAbortedError)
                                     or not str(error)):
        # (a listener in the clear reads the TLS hello as a request far past its size limit, and closes)
        return f"the TLS handshake failed{f' ({error})' if str(error) else ''}: is it a TLS listener? " \
               "security.protocol=SSL or SASL_SSL asks for one"
    return str(error) or type(error).__name__


#: The TLS alerts of a broker that wants a client certificate (``ssl.client.auth=required``) and
#: got none, or one it does not trust: in TLS 1.3 they come with the first answer, not the handshake.
_CERTIFICATE_ALERTS = ("SSLV3_ALERT_BAD_CERTIFICATE", "TLSV13_ALERT_CERTIFICATE_REQUIRED",
                       "SSLV3_ALERT_CERTIFICATE_UNKNOWN", "TLSV1_ALERT_UNKNOWN_CA")


def _client_certificate_refused(error: BaseException) -> str | None:
    """The cure, in words, when `error` is the broker's refusal of our certificate (or of none)."""
    if isinstance(error, ssl.SSLError) and error.reason in _CERTIFICATE_ALERTS:
        return (f"the broker refused the client certificate, or the lack of one ({error.reason}): "
                "ssl.keystore.location names a PEM key and certificate chain the broker's truststore trusts")
    return None


class _NotKafka(Exception):
    """The port answered in another protocol (the message says which, and what to do)."""


def _check_kafka(head: bytes) -> None:
    """Refuse the first four bytes of an answer to ApiVersions (a Kafka response's size, a few
    hundred bytes) that are another protocol's: an HTTP status line (a REST proxy, a web
    console, a metrics port), or a TLS record (content type 20-23, then major version 3), as a
    TLS listener answers a request in the clear.

    Raises
    ------
    _NotKafka
        Naming the protocol.
    """
    if head.startswith(b"HTTP"):
        raise _NotKafka("answers HTTP, not Kafka's protocol: a REST proxy, a web console or a metrics port? "
                        "(give a Kafka listener's address)")
    if 20 <= head[0] <= 23 and head[1] == 3:
        raise _NotKafka("answers in TLS: set security.protocol=SSL (or SASL_SSL) in --command-config")


def _response_header(data: bytes, *, flexible: bool) -> tuple[int, int]:
    """The correlation id and where the body starts: response header v0 (the id), or v1 (then
    tagged fields, skipped as a flexible struct's are: `compiled.skip_tagged`)."""
    if len(data) < 4:
        raise ProtocolError("correlation_id: the response is shorter than its header")
    correlation = _SIZE.unpack_from(data)[0]
    if not flexible:
        return correlation, 4
    try:
        return correlation, compiled.skip_tagged(data, 4)
    except (compiled.Irregular, IndexError):
        raise ProtocolError("tagged_fields: past the end of the response header") from None
