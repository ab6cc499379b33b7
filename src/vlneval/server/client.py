"""The client behind ``vlneval submit``: upload, retry safely, wait for the score.

Every upload carries an ``Idempotency-Key``; a connection error or a 5xx answer is retried with
the same key, so a retry never makes a second submission and never loses the first.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from vlneval.errors import VLNEvalError

__all__ = ["Client", "SubmitError", "ServerUnavailable", "TERMINAL"]

TERMINAL = ("finished", "failed")
RETRIES = 5


class SubmitError(VLNEvalError):
    """The server refused a request; ``problems`` lists what is wrong with the file."""

    def __init__(self, status: int, detail: str, problems: list[str] | None = None) -> None:
        self.status, self.detail, self.problems = status, detail, problems or []
        lines = [f"the server refused the request ({status}): {detail}"]
        lines += [f"  {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class ServerUnavailable(VLNEvalError):
    """The server could not be reached or kept failing (not the submitter's fault)."""


class Client:
    """A client of one server for one team.

    Args:
        server: the server's base URL, e.g. ``http://127.0.0.1:8000``.
        token: the team's API token (needed for everything but leaderboards).
        timeout: seconds per request.
    """

    def __init__(self, server: str, token: str | None = None, *, timeout: float = 120.0) -> None:
        import httpx  # deferred: httpx (pulls rich; ~200 ms)

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=server.rstrip("/"), headers=headers, timeout=timeout)

    def close(self) -> None:
        """Closes the connection pool."""
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, url: str, *, retry: bool = True, **kw: Any) -> Any:
        import httpx  # deferred: httpx (pulls rich; ~200 ms)

        delay = 0.5
        for attempt in range(RETRIES if retry else 1):
            try:
                resp = self.http.request(method, url, **kw)
            except httpx.TransportError as exc:
                if attempt == RETRIES - 1 or not retry:
                    raise ServerUnavailable(f"cannot reach {self.http.base_url}: {exc}") from None
            else:
                if resp.status_code < 500 or not retry or attempt == RETRIES - 1:
                    return self._decode(resp)
            time.sleep(delay)
            delay = min(delay * 2, 8.0)
        raise ServerUnavailable(f"{self.http.base_url} keeps failing")  # pragma: no cover

    @staticmethod
    def _decode(resp: Any) -> Any:
        try:
            body = resp.json()
        except ValueError:
            body = {"detail": resp.text[:500]}
        if resp.status_code >= 500:
            raise ServerUnavailable(f"server error {resp.status_code}: {body.get('detail', '')}")
        if resp.status_code >= 400:
            detail = body.get("detail", "") if isinstance(body, dict) else str(body)
            problems = body.get("problems", []) if isinstance(body, dict) else []
            raise SubmitError(resp.status_code, str(detail), list(problems))
        return body

    def submit(
        self,
        challenge: str,
        phase: str,
        predictions: str | Path,
        *,
        protocol: dict[str, Any] | None = None,
        method: str = "",
        description: str = "",
        url: str = "",
    ) -> dict[str, Any]:
        """Uploads a predictions file; returns the submission record."""
        path = Path(predictions)
        if not path.is_file():
            raise VLNEvalError(f"{path}: no such file")
        data = {"method": method, "description": description, "url": url}
        if protocol:
            data["protocol"] = json.dumps(protocol)
        key = uuid.uuid4().hex
        content = path.read_bytes()
        return self._request(  # type: ignore[no-any-return]
            "POST",
            f"/api/v1/challenges/{challenge}/phases/{phase}/submissions",
            files={"file": (path.name, content, "application/octet-stream")},
            data=data,
            headers={"Idempotency-Key": key},
        )

    def submission(self, uid: str) -> dict[str, Any]:
        """One of the team's submissions."""
        return self._request("GET", f"/api/v1/submissions/{uid}")  # type: ignore[no-any-return]

    def wait(self, uid: str, *, timeout: float = 600.0, poll: float = 1.0) -> dict[str, Any]:
        """Polls until the submission is finished or failed (or ``timeout`` passes)."""
        deadline = time.monotonic() + timeout
        while True:
            sub = self.submission(uid)
            if sub["status"] in TERMINAL:
                return sub
            if time.monotonic() > deadline:
                raise ServerUnavailable(
                    f"submission {uid} is still {sub['status']} after {timeout:.0f} s"
                )
            time.sleep(poll)
            poll = min(poll * 1.5, 10.0)
