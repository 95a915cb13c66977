"""Serve the service: ``python -m api [--host HOST] [--port PORT]`` (what `make serve`, the
container and the tests run).

One place decides how the HTTP server runs, whoever starts it:

- HTTP/1.1 with read timeouts for headers and bodies (`api.slow_clients`);
- the open-file limit raised to what the system allows, so a crowd of idle connections (each a
  file descriptor until its timeout closes it) does not leave the server unable to accept;
- no ``server`` header; ``X-Forwarded-*`` read only from the proxies named in
  ``ASSIGNOR_FORWARDED_ALLOW_IPS`` (none by default: a client's own header is not believed);
- SIGTERM ends the service within seconds (graceful shutdown 5 s; the planning pool ends its
  processes after 2 s); so does Ctrl-C, with no traceback: the planning processes leave it to
  the service, and a request cancelled at the end of the graceful shutdown is one log line;
- a non-loopback address only with a token (``ASSIGNOR_API_TOKEN``), or when told explicitly
  that no token is wanted (``--no-token-on-network``): without one, anyone who can reach the
  address can write the registry.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import resource
import sys

import uvicorn

from api.settings import Settings
from api.slow_clients import GuardedH11Protocol

log = logging.getLogger("api")

#: Seconds the server waits for requests under way on SIGTERM before it stops them.
GRACEFUL_SHUTDOWN_SECONDS = 5


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name to bind) reaches this machine only.

    Examples
    --------
    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def raise_open_file_limit() -> tuple[int, int]:
    """Raise this process's soft open-file limit to its hard limit; returns (before, after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            return soft, hard
        except (ValueError, OSError):
            pass
    return soft, soft


class _StoppedAtShutdown(logging.Filter):
    """A request still planning when the graceful shutdown's time is up is cancelled by uvicorn,
    which logs the cancellation with a traceback (Ctrl-C on a busy service printed one): one line
    says it instead. Every other error keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, asyncio.CancelledError) and "graceful shutdown" in str(error):
            record.msg, record.args, record.exc_info = ("a request still planning at shutdown was stopped (%s)",
                                                        (error,), None)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m api", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                        help="(default: %(default)s)")
    parser.add_argument("--no-token-on-network", action="store_true",
                        help="serve a non-loopback address without ASSIGNOR_API_TOKEN (anyone who reaches it "
                             "can write the registry)")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    if not is_loopback(args.host) and settings.token is None and not args.no_token_on_network:
        parser.error(f"--host {args.host} is reachable from other machines and ASSIGNOR_API_TOKEN is not set: set a "
                     "token, or pass --no-token-on-network to serve without one")
    raise_open_file_limit()
    logging.getLogger("uvicorn.error").addFilter(_StoppedAtShutdown())  # (uvicorn's logging set-up keeps it)
    GuardedH11Protocol.configure(settings)
    forwarded = settings.forwarded_allow_ips
    uvicorn.run("api.app:create_app", factory=True, host=args.host, port=args.port, http=GuardedH11Protocol,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS, server_header=False,
                proxy_headers=bool(forwarded), forwarded_allow_ips=forwarded or None, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
