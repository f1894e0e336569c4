"""fetch_url: pages served from 127.0.0.1 with private addresses allowed; refusals without."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from vance_cli.tools.fetch import MAX_REDIRECTS, html_text
from vance_cli.tools.registry import builtin
from vance_cli.tools.tool import ToolContext, ToolResult

PAGE = b"""<!doctype html><html><head><title>Login  docs</title>
<style>body { color: red }</style><script>var secret = 1;</script></head>
<body><h1>Login</h1><p>The app checks the <b>password</b> hash.</p>
<ul><li>one &amp; two</li><li>three</li></ul></body></html>"""


class Handler(BaseHTTPRequestHandler):
    """Serves a few fixed routes; counts the methods it sees."""

    methods: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Handler.methods.append("GET")
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE),
            "/plain": (200, "text/plain", "caf\u00e9 plain".encode()),
            "/big": (200, "text/plain", b"y" * 50_000),
            "/image": (200, "image/png", b"\x89PNG\r\n"),
            "/missing": (404, "text/html", b"<p>no such page</p>"),
        }
        if self.path == "/redirect":
            self._send(302, "text/plain", b"", location="/page")
        elif self.path == "/to-file":
            self._send(302, "text/plain", b"", location="file:///etc/passwd")
        elif self.path == "/loop":
            self._send(302, "text/plain", b"", location="/loop")
        elif self.path in routes:
            self._send(*routes[self.path])
        else:
            self._send(404, "text/plain", b"?")

    def _send(self, status: int, kind: str, body: bytes, location: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def private(context: ToolContext) -> ToolContext:
    return replace(context, allow_private_urls=True, options={"tools.fetch.max_bytes": 10_000})


def fetch(context: ToolContext, url: str) -> ToolResult:
    return builtin("fetch_url").run({"url": url}, context)


def test_an_html_page_comes_back_as_its_visible_text(private: ToolContext, server: str) -> None:
    result = fetch(private, f"{server}/page")
    assert result.ok, result.text
    head, _, body = result.text.partition("\n\n")
    assert head == f"{server}/page (200, Login docs)"
    assert body == "Login\nThe app checks the password hash.\none & two\nthree"
    assert "secret" not in result.text and "color" not in result.text
    assert result.details["content_type"] == "text/html"


def test_redirects_are_followed_and_checked_again(private: ToolContext, server: str) -> None:
    followed = fetch(private, f"{server}/redirect")
    assert followed.ok and followed.details["url"] == f"{server}/page"
    to_file = fetch(private, f"{server}/to-file")
    assert not to_file.ok and "/etc/passwd" in to_file.text and "http://" in to_file.text
    loop = fetch(private, f"{server}/loop")
    assert not loop.ok and f"more than {MAX_REDIRECTS} redirects" in loop.text


def test_the_body_is_capped(private: ToolContext, server: str) -> None:
    result = fetch(private, f"{server}/big")
    assert result.details["truncated"] and result.details["bytes"] == 10_000
    assert "[cut:" in result.text


def test_text_types_pass_and_others_are_refused(private: ToolContext, server: str) -> None:
    assert fetch(private, f"{server}/plain").text.endswith("caf\u00e9 plain")
    image = fetch(private, f"{server}/image")
    assert not image.ok and "image/png" in image.text
    missing = fetch(private, f"{server}/missing")
    assert not missing.ok and "(404" in missing.text and "no such page" in missing.text


def test_only_get_is_sent(private: ToolContext, server: str) -> None:
    Handler.methods.clear()
    fetch(private, f"{server}/redirect")
    assert Handler.methods == ["GET", "GET"]


def test_loopback_and_private_addresses_are_refused_by_default(
        context: ToolContext, server: str) -> None:
    Handler.methods.clear()
    for url in (f"{server}/page", "http://localhost/", "http://10.1.2.3/", "http://[::1]/",
                "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]/"):
        result = fetch(context, url)
        assert not result.ok, url
        assert "public addresses only" in result.text and "tools.fetch.allow_private" in result.text
    assert Handler.methods == []


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/", "example.org",
                                 "http:///nohost"])
def test_other_schemes_are_refused(context: ToolContext, url: str) -> None:
    result = fetch(context, url)
    assert not result.ok and "http:// or https://" in result.text


def test_html_text_skips_scripts_and_keeps_blocks() -> None:
    title, text = html_text("<title>T</title><div>a<script>x()</script></div><p>b  c</p>")
    assert title == "T" and text == "a\nb c"
