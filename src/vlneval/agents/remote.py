"""Remote agents: an agent served over HTTP, driven by ``vlneval run --agent http://host:port``.

The wire protocol (``vlneval-agent-v1``) is plain JSON over HTTP/1.1, one episode a session.
A request carries exactly what an in-process agent receives, the observation's fields and the
episode's seed, so the information boundary of the environment holds across the wire: goals,
reference paths and distances to the goal are never in an observation, and the privileged
channel (``teacher=``) is never served (a privileged agent is refused at both ends).

Endpoints (a base path in the URL, ``http://host:port/nav``, prefixes them):

- ``GET /info`` → ``{"protocol": "vlneval-agent-v1", "agent": {"id", "action_spaces",
  "privileged": false, "protocol": {card fields}}}``;
- ``POST /reset`` ``{"protocol", "session", "seq": 0, "observation", "rng"}`` → ``{}``: a new
  episode. ``session`` is a fresh random id per episode; ``rng`` is the episode's seed, derived
  from the run's seed and the episode's global index as
  :func:`~vlneval.agents.rollout.episode_rng` does: ``{"entropy": run seed, "spawn_key":
  [global index], "seed": a 63-bit integer from the same seed sequence}``. A Python server
  rebuilds the in-process generator exactly with
  ``np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=spawn_key))``; others may
  seed their sampler with ``seed``;
- ``POST /act`` ``{"session", "seq", "observation"}`` → ``{"action": int}`` (in the velocity and
  waypoint spaces of the continuous environments: an integer for STOP, else an array of
  numbers, ``[linear, angular]`` or ``[distance, heading(, height)]``);
- ``POST /finish`` ``{"session", "seq", "observation"}`` (the final observation) →
  ``{"fields": {...} | null}``: fields for the prediction record (e.g. ``predObjId``); ends the
  session.

``seq`` counts the session's requests from 0; a server answers a repeated ``seq`` from its
cache without calling the agent again, so a request retried after a timeout never steps the
agent twice. Errors are HTTP 4xx/5xx with ``{"error": "text"}``.

The continuous rollout never calls ``finish`` on an agent: a remote agent ends each episode's
session with ``/finish`` carrying the last observation it acted on, when the next episode
starts or the run ends.

Observations are JSON objects: numbers and strings as they are, tuples and lists as arrays,
arrays (``features``) as nested arrays, and named tuples and mappings as objects with their
field names: a graph candidate is ``{"viewpoint", "rel_heading", "rel_elevation", "distance",
"view_index"}`` (distance: straight-line, to the candidate), a street link ``{"panorama",
"heading", "relative_heading"}``. :func:`decode_observation` turns them back into the objects
an in-process agent sees (what ``vlneval serve-agent`` does).

The client needs only the standard library (one keep-alive ``http.client`` connection per
agent instance); timeouts and retries are bounded (``--agent-arg timeout=60 --agent-arg
retries=2``).

Example:
    >>> from vlneval.graph.tables import Candidate
    >>> wire = encode_observation({"step": 0, "candidates": (Candidate("a", 0.0, 0.0, 0.0, 12),)})
    >>> wire["candidates"][0]["viewpoint"], decode_observation(wire)["candidates"][0].view_index
    ('a', 12)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import http.client
import json
import time
import uuid
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from vlneval.agents.base import KNOWN_SPACES, AgentInfo
from vlneval.envs.street.env import StreetLink
from vlneval.errors import VLNEvalError
from vlneval.graph.tables import Candidate

__all__ = [
    "session_ended",
    "PROTOCOL",
    "RemoteAgentError",
    "RemoteAgent",
    "remote_agent_info",
    "is_remote",
    "encode_observation",
    "action_wire",
    "action_from_wire",
    "decode_observation",
    "rng_wire",
    "rng_from_wire",
]

PROTOCOL = "vlneval-agent-v1"
#: HTTP statuses worth a retry: the server or a proxy in front of it is busy or restarting.
_RETRY_STATUS = (502, 503, 504)


class RemoteAgentError(VLNEvalError):
    """A remote agent could not be reached, or answered outside the protocol."""


def is_remote(spec: str) -> bool:
    """Whether an ``--agent`` value names a remote agent (an ``http(s)://`` URL).

    Example:
        >>> is_remote("http://127.0.0.1:8765"), is_remote("random")
        (True, False)
    """
    return spec.startswith(("http://", "https://"))


# -- observations and seeds on the wire -------------------------------------------------------
def _wire(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return {k: _wire(v) for k, v in zip(value._fields, value, strict=True)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _wire(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_wire(v) for v in value]
    raise RemoteAgentError(f"cannot send a {type(value).__name__} to a remote agent: {value!r}")


def encode_observation(observation: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON form of an observation (see the module docstring)."""
    return {str(k): _wire(v) for k, v in observation.items()}


def _named(key: str) -> Any:
    if key == "candidates":
        return Candidate
    return StreetLink


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    return value


#: How the reference server turns fields back into what the in-process agent sees.
_ARRAYS = {"features": np.float32, "position": np.float64}


def decode_observation(wire: Mapping[str, Any]) -> dict[str, Any]:
    """The observation an in-process agent sees, from its JSON form: graph candidates and street
    links as their named tuples, ``features`` (float32) and ``position`` as read-only arrays,
    arrays as tuples and objects as read-only mappings."""
    out: dict[str, Any] = {}
    for key, value in wire.items():
        if key in _ARRAYS and isinstance(value, list):
            out[key] = np.asarray(value, dtype=_ARRAYS[key])
            out[key].setflags(write=False)
        elif key in ("candidates", "links") and isinstance(value, list):
            out[key] = tuple(_named(key)(**v) if isinstance(v, dict) else _frozen(v) for v in value)
        else:
            out[key] = _frozen(value)
    return out


def action_wire(action: Any) -> int | list[float]:
    """An action as ``/act`` answers it: an integer, or a list of numbers (a command).

    Example:
        >>> action_wire(np.int64(2)), action_wire((0.5, np.float32(-0.25)))
        (2, [0.5, -0.25])
    """
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, (list, tuple, np.ndarray)):
        try:
            values = [float(a) for a in action]
        except (TypeError, ValueError):
            values = []
        if values and all(np.isfinite(values)):
            return values
    raise RemoteAgentError(
        f"an action is an integer or a list of finite numbers, got {action!r:.60}"
    )


def action_from_wire(value: Any) -> int | tuple[float, ...]:
    """The action of an ``/act`` answer (see :func:`action_wire`): an integer, or a tuple of
    floats; raises :class:`RemoteAgentError` for anything else.

    Example:
        >>> action_from_wire(3), action_from_wire([0.5, -0.25])
        (3, (0.5, -0.25))
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    ):
        return tuple(float(v) for v in value)
    raise RemoteAgentError(f'expected {{"action": integer or array of numbers}}, got {value!r:.60}')


def rng_wire(rng: np.random.Generator) -> dict[str, Any]:
    """The episode's seed as the client sends it: the seed sequence ``rng`` was made from.

    Example:
        >>> from vlneval.agents.rollout import episode_rng
        >>> wire = rng_wire(episode_rng(0, 17))
        >>> wire["entropy"], wire["spawn_key"]
        (0, [17])
        >>> int(rng_from_wire(wire).integers(1000)) == int(episode_rng(0, 17).integers(1000))
        True
    """
    bits = rng.bit_generator
    seq = getattr(bits, "seed_seq", None)
    if not isinstance(bits, np.random.PCG64) or not isinstance(seq, np.random.SeedSequence):
        raise RemoteAgentError(
            "a remote agent's rng must come from a seed sequence (vlneval.agents.rollout."
            "episode_rng), so the server can rebuild it"
        )
    if np.random.PCG64(seq).state != bits.state:
        raise RemoteAgentError("a remote agent's rng was used before reset(): cannot send it")
    return {
        "entropy": seq.entropy,
        "spawn_key": [int(k) for k in seq.spawn_key],
        "seed": int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1)),
    }


def rng_from_wire(wire: Any) -> np.random.Generator:
    """The generator of a ``/reset`` request's ``rng`` (the in-process one, exactly)."""
    if not isinstance(wire, Mapping) or not isinstance(wire.get("spawn_key"), list):
        raise RemoteAgentError(f"rng: expected {{'entropy', 'spawn_key', 'seed'}}, got {wire!r}")
    try:
        seq = np.random.SeedSequence(wire.get("entropy"), spawn_key=tuple(wire["spawn_key"]))
    except (TypeError, ValueError) as exc:
        raise RemoteAgentError(f"rng: {exc}") from exc
    return np.random.default_rng(seq)


# -- the HTTP client ----------------------------------------------------------------------------
class _Endpoint:
    """One keep-alive connection to a remote agent, with bounded timeouts and retries."""

    def __init__(self, url: str, *, timeout: float, retries: int) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RemoteAgentError(f"--agent {url}: expected http://host:port[/path]")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise RemoteAgentError(f"remote agent {url}: retries must be >= 0, got {retries!r}")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise RemoteAgentError(f"remote agent {url}: timeout must be > 0 s, got {timeout!r}")
        self.url = url.rstrip("/")
        self._parts, self._base = parts, parts.path.rstrip("/")
        self.timeout, self.retries = float(timeout), retries
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = (
                http.client.HTTPSConnection
                if self._parts.scheme == "https"
                else http.client.HTTPConnection
            )
            self._conn = cls(self._parts.hostname or "", self._parts.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        """Closes the connection (a later call opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def call(self, path: str, payload: Mapping[str, Any] | None, where: str = "") -> dict[str, Any]:
        """GET (``payload`` None) or POST ``path``; the JSON object answered."""
        body = None if payload is None else json.dumps(payload, allow_nan=False).encode()
        target = f"{self.url}{path}{where}"
        attempt, last = 0, ""
        while attempt <= self.retries:
            reused = self._conn is not None
            try:
                status, data = self._send(path, body)
            except TimeoutError:
                self.close()
                last, attempt = f"no answer within {self.timeout:g} s", attempt + 1
                continue
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                last = f"cannot connect ({exc.__class__.__name__}: {exc})"
                if not reused:  # a closed keep-alive connection is retried at no cost
                    attempt += 1
                    time.sleep(min(0.1 * 2**attempt, 2.0))
                continue
            if status in _RETRY_STATUS:
                last, attempt = f"HTTP {status} ({_error_text(data)})", attempt + 1
                time.sleep(min(0.1 * 2**attempt, 2.0))
                continue
            return _answer(target, status, data)
        raise RemoteAgentError(
            f"remote agent {target}: {last} after {self.retries + 1} attempt"
            f"{'s' if self.retries else ''}; is the agent server running (vlneval serve-agent "
            "--agent NAME --port PORT)?"
        )

    def _send(self, path: str, body: bytes | None) -> tuple[int, bytes]:
        conn = self._connection()
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn.request("GET" if body is None else "POST", self._base + path, body, headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.will_close:
            self.close()
        return resp.status, data


def _error_text(data: bytes) -> str:
    try:
        obj = json.loads(data)
    except ValueError:
        text = data[:200].decode("utf-8", "replace").strip()
        if text.startswith("<"):  # a web server's page: a vlneval agent answers in JSON
            return f"not a {PROTOCOL} server (it answered with a web page): check the host and port"
        return text or "no body"
    if isinstance(obj, dict) and "error" in obj:
        return str(obj["error"])
    return str(obj)[:200]


def _answer(target: str, status: int, data: bytes) -> dict[str, Any]:
    if status != 200:
        raise RemoteAgentError(f"remote agent {target}: HTTP {status}: {_error_text(data)}")
    try:
        obj = json.loads(data)
    except ValueError as exc:
        raise RemoteAgentError(
            f"remote agent {target}: the answer is not JSON ({exc}): {data[:80]!r}"
        ) from exc
    if not isinstance(obj, dict):
        raise RemoteAgentError(f"remote agent {target}: expected a JSON object, got {obj!r}")
    return obj


class RemoteAgent:
    """An agent served over HTTP (see the module docstring); one instance per batch slot.

    Args:
        url: the server, ``http://host:port`` (and an optional base path).
        timeout: seconds to wait for each answer.
        retries: further attempts after a timeout, a refused connection or HTTP 502/503/504.
        protocol: the served agent's card fields (:func:`remote_agent_info`).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        protocol: Mapping[str, Any] | None = None,
    ) -> None:
        self._endpoint = _Endpoint(url, timeout=timeout, retries=retries)
        self.id = self._endpoint.url
        self.protocol = dict(protocol or {})
        self.session: str | None = None
        self._seq = 0
        self._last: Mapping[str, Any] | None = None

    def _post(self, path: str, fields: dict[str, Any]) -> dict[str, Any]:
        if self.session is None:
            raise RemoteAgentError(f"remote agent {self._endpoint.url}: {path} before /reset")
        payload = {"session": self.session, "seq": self._seq, **fields}
        answer = self._endpoint.call(
            path, payload, f" (session {self.session}, request {self._seq})"
        )
        self._seq += 1
        return answer

    def reset(
        self, observation: Mapping[str, Any], *, rng: np.random.Generator, teacher: Any = None
    ) -> None:
        """Ends the previous episode's open session, if any; starts one for this episode."""
        if teacher is not None:
            raise RemoteAgentError(
                f"remote agent {self.id}: the privileged channel never crosses the wire"
            )
        self.end_session()
        self._last = observation
        self.session, self._seq = uuid.uuid4().hex, 0
        self._post("/reset", {"protocol": PROTOCOL, "observation": encode_observation(observation),
                              "rng": rng_wire(rng)})  # fmt: skip

    def act(self, observation: Mapping[str, Any]) -> int | tuple[float, ...]:
        """The server's action: an integer, or a command (a tuple of floats)."""
        self._last = observation
        answer = self._post("/act", {"observation": encode_observation(observation)})
        try:
            return action_from_wire(answer.get("action"))
        except RemoteAgentError:
            raise RemoteAgentError(
                f"remote agent {self._endpoint.url}/act (session {self.session}): expected "
                f'{{"action": integer or array of numbers}}, got {str(answer)[:120]}'
            ) from None

    def finish(self, observation: Mapping[str, Any]) -> dict[str, Any] | None:
        """Ends the session; the fields the server adds to the record."""
        answer = self._post("/finish", {"observation": encode_observation(observation)})
        self.session, self._last = None, None
        fields = answer.get("fields")
        if fields is not None and not isinstance(fields, dict):
            raise RemoteAgentError(
                f"remote agent {self._endpoint.url}/finish: expected "
                f'{{"fields": object or null}}, got {answer!r}'
            )
        return fields

    def end_session(self) -> None:
        """Ends the open session, if any (``/finish`` with the last observation acted on)."""
        if self.session is not None and self._last is not None:
            self.finish(self._last)
        self._last = None


def remote_agent_info(url: str, *, timeout: float = 30.0, retries: int = 2) -> AgentInfo:
    """The :class:`~vlneval.agents.base.AgentInfo` of the agent served at ``url`` (``GET /info``).

    Raises:
        RemoteAgentError: the server is unreachable, speaks another protocol, or serves a
            privileged agent.
    """
    endpoint = _Endpoint(url, timeout=timeout, retries=retries)
    try:
        info = endpoint.call("/info", None)
    finally:
        endpoint.close()
    url = endpoint.url
    agent = info.get("agent")
    if info.get("protocol") != PROTOCOL or not isinstance(agent, dict):
        raise RemoteAgentError(
            f"remote agent {url}/info: expected protocol {PROTOCOL!r} with an agent object, got "
            f"{str(info)[:120]}"
        )
    if agent.get("privileged", False) is not False:
        raise RemoteAgentError(
            f"remote agent {url}: the served agent is privileged; the privileged channel "
            "(teacher, goals) never crosses the wire: run it in-process"
        )
    spaces = agent.get("action_spaces")
    if (
        not isinstance(spaces, list)
        or not spaces
        or not all(isinstance(s, str) and s in KNOWN_SPACES for s in spaces)
    ):
        raise RemoteAgentError(
            f"remote agent {url}/info: action_spaces must name some of "
            f"{', '.join(KNOWN_SPACES)}, got {spaces!r}"
        )
    protocol = agent.get("protocol") or {}
    if not isinstance(protocol, dict):
        raise RemoteAgentError(f"remote agent {url}/info: protocol must be an object")
    served = str(agent.get("id", "?"))
    card = {**protocol, "remote_agent": {"url": url, "id": served, "protocol": PROTOCOL}}
    factory = functools.partial(RemoteAgent, url, timeout=timeout, retries=retries, protocol=card)
    return AgentInfo(url, factory, tuple(spaces), False, card, "vlneval.agents.remote:RemoteAgent")


@contextlib.contextmanager
def session_ended(agent: Any) -> Iterator[None]:
    """Ends a remote agent's open session when the block ends (the continuous rollout never
    calls ``finish``); any agent without sessions is left alone. When the block failed, a
    failure to end the session is swallowed so that the block's own error is the one raised.

    Example:
        >>> with session_ended(object()):
        ...     pass
    """
    end = getattr(agent, "end_session", None)
    try:
        yield
    except BaseException:
        if end is not None:
            with contextlib.suppress(Exception):
                end()
        raise
    if end is not None:
        end()
