"""A loopback HTTP server for fetch tests: serves bytes by path, honours Range, can misbehave."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Site:
    """What the server serves and how; ``log`` records (path, Range header) of each GET."""

    files: dict[str, bytes] = field(default_factory=dict)
    drop_once: dict[str, int] = field(default_factory=dict)  # path -> bytes sent before dropping
    ignore_range: bool = False
    log: list[tuple[str, str | None]] = field(default_factory=list)
    url: str = ""


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the API's name
            pass

        def do_GET(self) -> None:  # noqa: N802 - the API's name
            path = self.path.lstrip("/")
            rng = self.headers.get("Range")
            site.log.append((path, rng))
            body = site.files.get(path)
            if body is None:
                self.send_error(404)
                return
            start = 0
            if rng and not site.ignore_range:
                start = int(rng.removeprefix("bytes=").split("-")[0])
                if start >= len(body):
                    self.send_error(416)
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(body) - start))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            cut = site.drop_once.pop(path, None)
            if cut is not None:
                self.wfile.write(body[start:cut])
                self.wfile.flush()
                self.close_connection = True
                return  # the client sees the connection close short of Content-Length
            self.wfile.write(body[start:])

    return Handler


@contextmanager
def serve(site: Site) -> Iterator[Site]:
    """Runs the server on 127.0.0.1 (ephemeral port) in a thread; sets ``site.url``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    site.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield site
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
