"""Remote-agent mistakes said in one line: a taken port, a URL that is not a vlneval agent."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from vlneval.cli.main import main


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_serve_agent_on_a_taken_port_exits_2_with_one_line(
    taken_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve-agent", "--agent", "random", "--port", str(taken_port)]) == 2
    assert capsys.readouterr().err == (
        f"error: cannot listen on 127.0.0.1:{taken_port}: address already in use "
        "(pick another --port)\n"
    )


class _WebPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        body = b"<!doctype html><html><title>404 Not Found</title></html>"
        self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_url_that_is_not_a_vlneval_agent_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        args = ["run", "--task", "demo", "--agent", url, "--out", str(tmp_path / "p.json")]
        assert main([*args, "--quiet"]) == 2
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert capsys.readouterr().err == (
        f"error: remote agent {url}/info: HTTP 404: not a vlneval-agent-v1 server (it answered "
        "with a web page): check the host and port\n"
    )
