"""The web application: JSON API, HTML pages, limits, security headers and error handling.

Every error a client can cause is answered with a JSON body ``{"detail": ..., "problems": [...]}``
(an HTML page for the pages) and never with a traceback; an unexpected error is logged with an
incident id and answered 500 with that id only.
"""

from __future__ import annotations

import logging
import re
import secrets
import traceback

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vlneval import __version__
from vlneval.server.api import organisers
from vlneval.server.api import routes as api
from vlneval.server.core.config import ServerConfig
from vlneval.server.core.database import Database
from vlneval.server.core.migrate import upgrade
from vlneval.server.core.ratelimit import RateLimiter, rate_limit
from vlneval.server.pages import forms
from vlneval.server.pages import views as pages
from vlneval.server.services import admin
from vlneval.server.services.storage import UploadStore
from vlneval.server.services.submissions import Refused

__all__ = ["create_app", "BodyLimit", "SecurityHeaders", "rate_limit"]

log = logging.getLogger("vlneval.server.app")

SMALL_BODY = 64 * 1024
TOKEN = re.compile(r"vlt_[A-Za-z0-9_\-]+")  # API tokens never reach a log line
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def _too_large(limit: int) -> StarletteHTTPException:
    return StarletteHTTPException(
        413, f"the request is larger than this server accepts ({limit:,} bytes for this endpoint)"
    )


class BodyLimit:
    """Refuses a request body over the endpoint's limit, by its header or as it streams in.

    Uploads (``POST .../submissions``) may carry ``max_upload`` bytes plus the multipart
    envelope; every other request 64 KiB.
    """

    def __init__(self, app: ASGIApp, max_upload: int) -> None:
        self.app, self.max_upload = app, max_upload

    def limit(self, scope: Scope) -> int:
        """The body limit of a request."""
        if scope.get("method") == "POST" and str(scope.get("path", "")).endswith("/submissions"):
            return self.max_upload + SMALL_BODY
        return SMALL_BODY

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit(scope)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            status = 400 if not length.isdigit() else 413
            detail = (
                "Content-Length is not a number" if status == 400 else str(_too_large(limit).detail)
            )
            await JSONResponse({"detail": detail, "problems": []}, status)(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _too_large(limit)
            return message

        await self.app(scope, limited, send)


class SecurityHeaders:
    """Adds ``nosniff``, no framing, a same-origin referrer policy and a strict CSP to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = str(scope.get("path", "")).startswith("/api/")

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"same-origin"),
                    (b"content-security-policy", CSP.encode()),
                ]
                if api:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, wrapped)


def _error(
    request: Request,
    status: int,
    detail: str,
    problems: list[str] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    if not request.url.path.startswith("/api/") and status != 401:  # a page
        return pages.render_error(request, status, detail)
    return JSONResponse({"detail": detail, "problems": problems or []}, status, headers=headers)


def _install_handlers(app: FastAPI) -> None:
    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)  # noqa: S101 - registered for Refused only
        return _error(request, exc.status, exc.detail, exc.problems)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)  # noqa: S101
        return _error(
            request, exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None)
        )

    async def invalid_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)  # noqa: S101
        problems = []
        for e in exc.errors():
            where = ".".join(str(x) for x in e.get("loc", ()))
            problems.append(f"{where}: {e.get('msg', 'invalid')}")
        return _error(request, 422, "the request is not valid", problems)

    async def crashed(request: Request, exc: Exception) -> Response:
        incident = secrets.token_hex(4)
        detail = "".join(traceback.format_exception(exc))
        admin_token = request.app.state.cfg.admin_token
        if admin_token:  # a traceback's locals could hold the header
            detail = detail.replace(admin_token, "[admin token]")
        log.error(
            "incident %s: %s %s\n%s",
            incident,
            request.method,
            request.url.path,
            TOKEN.sub("vlt_[hidden]", detail),
        )
        return JSONResponse(
            {
                "detail": f"internal server error (incident {incident}); the organisers can look it up",
                "problems": [],
            },
            500,
        )

    app.add_exception_handler(Refused, refused)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(Exception, crashed)


def create_app(
    cfg: ServerConfig | None = None, *, db: Database | None = None, migrate: bool = True
) -> FastAPI:
    """The server's ASGI application.

    Args:
        cfg: the configuration (default: :class:`ServerConfig` from the environment).
        db: an open database (default: opened from ``cfg``).
        migrate: upgrade the database schema first, and rank the stored phases whose
            primary metric their task does not produce by the task's own
            (:func:`vlneval.server.services.admin.repair_primary_metrics`), and count again
            the items each asks for (:func:`~vlneval.server.services.admin.repair_item_counts`);
            a continuous phase measures its distances to the goal on the twin worlds
            (:func:`~vlneval.server.services.admin.repair_distance_sources`).

    Example:
        >>> import tempfile
        >>> app = create_app(ServerConfig(data_dir=tempfile.mkdtemp()))
        >>> paths = app.openapi()["paths"]
        >>> "/api/v1/challenges" in paths, "/api/v1/admin/submissions/{uid}/moderation" in paths
        (True, True)
    """
    cfg = cfg or ServerConfig()
    if migrate:
        upgrade(cfg.database_url)
    app = FastAPI(
        title="vlneval evaluation server",
        version=__version__,
        description="Submit VLN predictions, read leaderboards; hidden test labels stay on the server.",
        openapi_url="/api/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.state.cfg = cfg
    app.state.db = db or Database(cfg.database_url)
    if migrate:
        admin.repair_primary_metrics(app.state.db)
        admin.repair_item_counts(app.state.db)
        admin.repair_distance_sources(app.state.db)
    app.state.store = UploadStore(cfg.uploads_dir)
    app.state.submit_limiter = RateLimiter(cfg.submit_rate, cfg.submit_burst)
    app.state.login_limiter = RateLimiter(cfg.login_rate, cfg.login_burst)
    app.include_router(api.router)
    app.include_router(organisers.router)
    app.include_router(pages.router)
    app.include_router(forms.router)
    _install_handlers(app)
    app.add_middleware(BodyLimit, max_upload=cfg.max_upload_bytes)  # type: ignore[arg-type]
    app.add_middleware(SecurityHeaders)  # type: ignore[arg-type]
    return app
