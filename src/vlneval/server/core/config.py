"""Server settings: where the data lives, which database, and the limits on uploads.

Everything has a default so that ``vlneval serve`` works with no setup: the data folder is
``$VLNEVAL_SERVER_DATA`` (else ``$XDG_DATA_HOME/vlneval/server``, else
``~/.local/share/vlneval/server``; ``~`` expanded in each) and the database an SQLite file
inside it, unless ``$VLNEVAL_DATABASE_URL`` (or ``--database-url``) names another, e.g.
``postgresql+psycopg://user@host/db``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from vlneval.io.paths import env_path

__all__ = ["ServerConfig", "default_data_dir", "MIB"]

MIB = 1024 * 1024


def default_data_dir() -> Path:
    """The default data folder (see the module docstring).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"VLNEVAL_SERVER_DATA": "/srv/vln"}):
        ...     print(default_data_dir())
        /srv/vln
    """
    env = env_path("VLNEVAL_SERVER_DATA")
    if env is not None:
        return env
    return env_path("XDG_DATA_HOME", "~/.local/share") / "vlneval" / "server"


def _env_hosts() -> tuple[str, ...]:
    raw = os.environ.get("VLNEVAL_ALLOWED_HOSTS", "")
    return tuple(h.strip().lower() for h in raw.split(",") if h.strip())


@dataclass(frozen=True)
class ServerConfig:
    """Settings shared by the web app, the workers and the admin commands.

    Attributes:
        data_dir: the folder holding uploads (and the SQLite file by default).
        database_url: a SQLAlchemy URL; default ``sqlite:///<data_dir>/vlneval.sqlite3``.
        max_upload_bytes: largest accepted upload, as sent (compressed or not).
        max_decompressed_bytes: largest accepted JSON text after gunzip (gzip-bomb guard).
        max_json_depth: deepest accepted nesting of lists and objects.
        max_json_values: most accepted JSON values (JSON-bomb guard against huge arrays).
        max_string_bytes: longest accepted JSON string.
        max_number_chars: longest accepted number literal (huge-number guard).
        lease_seconds: a running submission whose worker stops heartbeating for this long is
            claimed again by another worker.
        poll_seconds: how often an idle worker looks for queued submissions.
        max_attempts: claims after which a submission that keeps killing its workers fails.
        scoring_timeout_seconds: a worker that scores one file longer than this gives up on it.
        max_pending_per_team: queued or running submissions a team may have in one phase.
        secure_cookies: always mark the session cookie ``Secure``. Without it the cookie is
            ``Secure`` unless the server is reached over plain HTTP on a loopback address: the
            scheme and host of ``public_url`` decide when it is set, else the request's.
        public_url: the address participants use (``--public-url``, ``$VLNEVAL_PUBLIC_URL``),
            e.g. ``https://eval.example.org``; named in the "Submit with" hint, and its host is
            allowed by the same-origin check.
        allowed_hosts: host names (``host`` or ``host:port``) whose pages may post the forms
            (``--allowed-host``, ``$VLNEVAL_ALLOWED_HOSTS`` comma-separated); the loopback names
            and ``public_url``'s host are always allowed. A form whose ``Origin`` names another
            host is refused: the ``Host`` header is not trusted.
        session_idle_seconds: a login unused this long ends (12 hours).
        session_max_seconds: a login ends this long after it began, used or not (7 days).
        max_trajectory_steps: most steps in one trajectory (a phase's ``max_steps`` option
            overrides it).
        mean_trajectory_steps: most steps per episode of the split over a whole file (a phase's
            ``mean_steps`` option overrides it); with the split's episodes it also bounds the
            file's JSON size.
        max_refused_per_day: refused submissions (a file with problems) a team may make per
            phase and UTC day; they do not count against the phase's quota.
        submit_rate: submissions per minute and token (a token bucket; bursts of ``submit_burst``).
        admin_token: a bearer token that shows organisers the health details (queue counts);
            empty: nobody sees them (``$VLNEVAL_ADMIN_TOKEN`` by default).
        login_rate: login attempts per minute and client address (bursts of ``login_burst``).

    Example:
        >>> cfg = ServerConfig(data_dir=Path("/tmp/vln"))
        >>> cfg.database_url
        'sqlite:////tmp/vln/vlneval.sqlite3'
        >>> cfg.is_sqlite
        True
    """

    data_dir: Path = field(default_factory=default_data_dir)
    database_url: str = ""
    max_upload_bytes: int = 64 * MIB
    max_decompressed_bytes: int = 256 * MIB
    max_json_depth: int = 32
    max_json_values: int = 20_000_000
    max_string_bytes: int = 64 * 1024
    max_number_chars: int = 40
    lease_seconds: float = 60.0
    poll_seconds: float = 0.5
    max_attempts: int = 3
    scoring_timeout_seconds: float = 1800.0
    max_pending_per_team: int = 20
    secure_cookies: bool = False
    public_url: str = field(default_factory=lambda: os.environ.get("VLNEVAL_PUBLIC_URL", ""))
    allowed_hosts: tuple[str, ...] = field(default_factory=lambda: _env_hosts())
    session_idle_seconds: float = 12 * 3600.0
    session_max_seconds: float = 7 * 24 * 3600.0
    max_trajectory_steps: int = 500
    mean_trajectory_steps: int = 64
    max_refused_per_day: int = 20
    submit_rate: float = 6.0
    submit_burst: int = 10
    login_rate: float = 10.0
    login_burst: int = 10
    admin_token: str = field(default_factory=lambda: os.environ.get("VLNEVAL_ADMIN_TOKEN", ""))

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir).expanduser().resolve())
        object.__setattr__(self, "public_url", self.public_url.strip().rstrip("/"))
        hosts = tuple(h.strip().lower() for h in self.allowed_hosts if h.strip())
        object.__setattr__(self, "allowed_hosts", hosts)
        if not self.database_url:
            url = os.environ.get("VLNEVAL_DATABASE_URL") or (
                f"sqlite:///{self.data_dir / 'vlneval.sqlite3'}"
            )
            object.__setattr__(self, "database_url", url)

    @property
    def is_sqlite(self) -> bool:
        """True when the database is an SQLite file."""
        return self.database_url.startswith("sqlite")

    @property
    def uploads_dir(self) -> Path:
        """Where uploaded files are stored."""
        return self.data_dir / "uploads"

    def to_env(self) -> dict[str, str]:
        """Environment variables that give a child process (a worker) the same folder and DB."""
        return {
            "VLNEVAL_SERVER_DATA": str(self.data_dir),
            "VLNEVAL_DATABASE_URL": self.database_url,
        }
