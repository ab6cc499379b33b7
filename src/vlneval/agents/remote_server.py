"""The reference server of the remote-agent protocol: any registered agent over HTTP.

``vlneval serve-agent --agent random --port 8765`` serves the in-process agent ``random`` on
the protocol of :mod:`vlneval.agents.remote` (standard library ``http.server``, one thread per
connection). Each session (episode) gets an agent instance from a pool, which the session
returns on ``/finish``, so a model's weights are loaded once per concurrent episode, not once
per episode. Observations are decoded back into the objects the in-process agent sees and the
episode's generator is rebuilt from its seed, so the served agent takes the in-process agent's
actions exactly.

Example:
    >>> from vlneval.agents.registry import get_agent
    >>> from vlneval.agents.remote import remote_agent_info
    >>> server = AgentServer(get_agent("stop"), port=0)
    >>> with server.running():
    ...     remote_agent_info(server.url).protocol["remote_agent"]["id"]
    'stop-v1'
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vlneval.agents.base import AgentInfo
from vlneval.agents.remote import (
    PROTOCOL,
    action_wire,
    decode_observation,
    rng_from_wire,
)
from vlneval.errors import VLNEvalError

__all__ = ["AgentServer"]

#: Largest request body accepted (a features observation of 36 x 2048 floats is about 1.5 MB).
MAX_BODY = 64 << 20


class _HTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Session:
    agent: Any
    seq: int = -1
    answer: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class AgentServer:
    """Serves ``agent`` (an :class:`~vlneval.agents.base.AgentInfo`) on ``host:port``.

    Args:
        agent: the agent to serve (not privileged: its channel never crosses the wire).
        host, port: where to listen (port 0: any free port; :attr:`url` says which).
        max_sessions: open sessions kept at most; the least recently used is dropped beyond.
        log: receives one line per request when given.
    """

    def __init__(
        self,
        agent: AgentInfo,
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        max_sessions: int = 1024,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if agent.privileged:
            raise VLNEvalError(
                f"agent {agent.id} is privileged: its teacher and goals never cross the wire, so "
                "it cannot be served; run it in-process"
            )
        self.agent, self.max_sessions, self.log = agent, max_sessions, log
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        try:  # before the agent is made: a taken port is said at once
            self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        except OSError as exc:  # the port is taken, or the host is not this machine's
            reason = (exc.strerror or str(exc)).lower()
            message = f"cannot listen on {host}:{port}: {reason} (pick another --port)"
            raise VLNEvalError(message) from exc
        # one instance now: its card fields (an agent may set them in its constructor) are
        # served by /info, and the first session takes it from the pool
        first = agent.make()
        self._protocol = {**agent.protocol, **dict(getattr(first, "protocol", None) or {})}
        self._free: list[Any] = [first]
        self._lock = threading.Lock()
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        """``http://host:port`` of the listening socket."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def info(self) -> dict[str, Any]:
        """The ``GET /info`` answer."""
        a = self.agent
        return {
            "protocol": PROTOCOL,
            "agent": {
                "id": a.id,
                "action_spaces": list(a.action_spaces),
                "privileged": False,
                "protocol": dict(self._protocol),
            },  # fmt: skip
        }

    def serve_forever(self) -> None:
        """Serves until :meth:`shutdown` (or Ctrl-C in the caller)."""
        self.httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stops serving and closes the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()

    @contextmanager
    def running(self) -> Iterator[AgentServer]:
        """Serves in a background thread for the duration of the ``with`` block."""
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.shutdown()
            thread.join(timeout=5)

    # -- sessions ---------------------------------------------------------------------------
    def _open(self, sid: str) -> _Session:
        with self._lock:
            old = self._sessions.get(sid)
            if old is not None:
                return old
            while len(self._sessions) >= self.max_sessions:
                _, dropped = self._sessions.popitem(last=False)
                self._free.append(dropped.agent)
            agent = self._free.pop() if self._free else None
        if agent is None:
            agent = self.agent.factory()
        session = _Session(agent)
        with self._lock:
            self._sessions[sid] = session
        return session

    def _get(self, sid: str) -> _Session:
        with self._lock:
            session = self._sessions.get(sid)
            if session is None:
                raise _HTTPError(404, f"unknown session {sid!r} (ended, dropped, or the server "
                                 "was restarted): start the episode again with /reset")  # fmt: skip
            self._sessions.move_to_end(sid)
            return session

    def _close(self, sid: str) -> None:
        with self._lock:
            session = self._sessions.pop(sid, None)
            if session is not None:
                self._free.append(session.agent)

    # -- endpoints ------------------------------------------------------------------------
    def handle(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to ``POST path`` with JSON ``body``."""
        sid, seq = body.get("session"), body.get("seq")
        if not isinstance(sid, str) or not sid:
            raise _HTTPError(400, "expected a session id (string)")
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise _HTTPError(400, "expected seq (integer)")
        if path == "/reset":
            if body.get("protocol", PROTOCOL) != PROTOCOL:
                raise _HTTPError(
                    400, f"this server speaks {PROTOCOL}, not {body.get('protocol')!r}"
                )
            session = self._open(sid)
        else:
            session = self._get(sid)
        with session.lock:
            if seq == session.seq:  # a retried request: the agent is not called twice
                return session.answer
            if seq != session.seq + 1:
                raise _HTTPError(409, f"session {sid}: request {seq} after {session.seq}")
            answer = self._call(path, session, body)
            session.seq, session.answer = seq, answer
        if path == "/finish":
            self._close(sid)
        return answer

    def _call(self, path: str, session: _Session, body: Mapping[str, Any]) -> dict[str, Any]:
        raw = body.get("observation")
        if not isinstance(raw, dict):
            raise _HTTPError(400, "expected an observation (object)")
        obs = decode_observation(raw)
        agent, name = session.agent, self.agent.id
        if path == "/reset":
            try:
                rng = rng_from_wire(body.get("rng"))
            except VLNEvalError as exc:
                raise _HTTPError(400, str(exc)) from exc
        try:
            if path == "/reset":
                agent.reset(obs, rng=rng)
                return {}
            if path == "/act":
                return {"action": action_wire(agent.act(obs))}
            hook = getattr(agent, "finish", None)
            fields = hook(obs) if hook is not None else None
            return {"fields": None if fields is None else dict(fields)}
        except _HTTPError:
            raise
        except Exception as exc:  # noqa: BLE001 - the agent's error goes back to the client
            raise _HTTPError(500, f"agent {name}: {path[1:]}() raised "
                             f"{type(exc).__name__}: {exc}") from exc  # fmt: skip


def _handler(server: AgentServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection per client agent
        timeout = 600  # an idle connection's thread ends after this many seconds
        disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms ACK wait)

        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            if self._path() == "/info":
                self._send(200, server.info())
            else:
                self._send(404, {"error": f"no such endpoint GET {self.path}: try /info"})

        def do_POST(self) -> None:  # noqa: N802 - the http.server name
            path = self._path()
            try:
                if path not in ("/reset", "/act", "/finish"):
                    raise _HTTPError(404, f"no such endpoint POST {self.path}")
                self._send(200, server.handle(path, self._body()))
            except _HTTPError as exc:
                self._send(exc.status, {"error": str(exc)})

        def _path(self) -> str:
            return "/" + self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]

        def _body(self) -> dict[str, Any]:
            try:
                n = int(self.headers.get("Content-Length", "0"))
            except ValueError as exc:
                raise _HTTPError(400, "bad Content-Length") from exc
            if not 0 < n <= MAX_BODY:
                raise _HTTPError(413 if n > MAX_BODY else 400, f"body of {n} bytes")
            try:
                body = json.loads(self.rfile.read(n))
            except ValueError as exc:
                raise _HTTPError(400, f"the body is not JSON: {exc}") from exc
            if not isinstance(body, dict):
                raise _HTTPError(400, "expected a JSON object")
            return body

        def _send(self, status: int, obj: Mapping[str, Any]) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            if server.log is not None:
                server.log(f"{self.address_string()} {format % args}")

    return Handler
