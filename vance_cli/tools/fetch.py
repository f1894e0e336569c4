"""``fetch_url``: GET one web page and return its text (label ``network``: the gate asks).

Rule (docs/tools.md#fetch_url): http and https only, GET only, no proxies from the environment;
the host is resolved and every address checked: loopback, private, link-local, multicast and
reserved addresses are refused unless ``tools.fetch.allow_private``. Redirects are followed by
hand (at most ``MAX_REDIRECTS``), each target checked the same way. The body is read up to
``tools.fetch.max_bytes``; HTML becomes its visible text (``html.parser``), other text types
come back as they are, anything else is refused. httpx2 (the openai client's HTTP library) is
imported on the first call.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx2
from pydantic import BaseModel, ConfigDict, Field

from vance_cli.tools.tool import Refused, Tool, ToolContext, ToolLabel, ToolResult
from vance_cli.tools.typed import typed_tool

MAX_REDIRECTS = 5
"""Redirects followed at most."""

TIMEOUT_SECONDS = 20.0
"""Seconds one fetch may take at most (less when the turn's deadline is nearer)."""

TEXT_MAX_CHARS = 40_000
"""Characters of page text returned at most."""

TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml",
              "application/javascript", "application/ld+json")
"""Content types returned as text."""

SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})
"""HTML elements whose content is no visible text."""

BLOCK_TAGS = frozenset({"p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article",
                        "header", "footer", "nav", "main", "h1", "h2", "h3", "h4", "h5", "h6",
                        "pre", "blockquote", "dt", "dd", "hr", "title", "form", "aside"})
"""HTML elements that end a line of text."""


class FetchUrlArgs(BaseModel):
    """Arguments of ``fetch_url``."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(max_length=4000, description="The http:// or https:// URL to GET.")


class _TextExtractor(HTMLParser):
    """Collects the visible text of an HTML page, a line per block element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED_TAGS:
            self._skip += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in SKIPPED_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)

    def text(self) -> str:
        lines = (" ".join(line.split()) for line in "".join(self.parts).splitlines())
        return "\n".join(line for line in lines if line)


def html_text(html: str) -> tuple[str, str]:
    """Return ``(title, visible text)`` of an HTML page."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return " ".join(parser.title.split()), parser.text()


def check_url(url: str, allow_private: bool) -> None:
    """Check a URL's scheme and every address its host resolves to.

    Raises:
        Refused: not http(s), no host, unresolvable, or an address that is not public
            (unless ``allow_private``).
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise Refused(f"{url!r} is not an http:// or https:// URL with a host")
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        infos = socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)
    except (OSError, ValueError) as exc:
        raise Refused(f"the host {parts.hostname!r} cannot be resolved ({exc})") from None
    if allow_private:
        return
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        if not address.is_global or address.is_multicast:
            raise Refused(f"{parts.hostname} resolves to {address}, a loopback, private or "
                          "reserved address; fetch_url reaches public addresses only "
                          "(the setting tools.fetch.allow_private lifts this)")


def _body(response: httpx2.Response, cap: int) -> tuple[bytes, bool]:
    data = bytearray()
    for chunk in response.iter_bytes():
        data += chunk
        if len(data) > cap:
            return bytes(data[:cap]), True
    return bytes(data), False


def _fetch(args: FetchUrlArgs, context: ToolContext) -> ToolResult:
    cap = int(context.options.get("tools.fetch.max_bytes", 2_000_000))
    seconds = TIMEOUT_SECONDS
    if context.deadline is not None:
        seconds = max(0.5, min(seconds, context.deadline - time.monotonic()))
    url = args.url
    headers = {"User-Agent": "vance-fetch_url", "Accept": "text/html, text/*;q=0.9, */*;q=0.1"}
    with httpx2.Client(follow_redirects=False, trust_env=False, timeout=seconds,
                       headers=headers) as client:
        for _ in range(MAX_REDIRECTS + 1):
            check_url(url, context.allow_private_urls)
            try:
                with client.stream("GET", url) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = str(response.url.join(response.headers["location"]))
                        continue
                    data, cut = _body(response, cap)
                    return _result(response, data, cut, cap)
            except httpx2.HTTPError as exc:
                return ToolResult.failed(f"fetch_url failed: {type(exc).__name__}: {exc}",
                                         url=url)
    raise Refused(f"more than {MAX_REDIRECTS} redirects (last: {url})")


def _result(response: httpx2.Response, data: bytes, cut: bool, cap: int) -> ToolResult:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    url = str(response.url)
    details = {"url": url, "status": response.status_code, "content_type": kind,
               "bytes": len(data), "truncated": cut}
    if kind and not kind.startswith(TEXT_TYPES):
        return ToolResult.failed(f"{url} is {kind}, not text; fetch_url returns text only",
                                 **details)
    text = data.decode(response.encoding or "utf-8", errors="replace")
    title = ""
    sniffed = not kind and "<html" in text[:1000].lower()
    if kind in ("text/html", "application/xhtml+xml") or sniffed:
        title, text = html_text(text)
    head = f"{url} ({response.status_code}{', ' + title if title else ''})\n\n"
    if len(text) > TEXT_MAX_CHARS:
        text, cut = text[:TEXT_MAX_CHARS], True
    if cut:
        text += f"\n[cut: only the first {min(cap, TEXT_MAX_CHARS)} bytes or characters shown]"
    return ToolResult(text=head + text, ok=response.is_success, details=details)


TOOL: Tool = typed_tool(
    "fetch_url",
    "GET a web page by its http(s) URL and return its readable text (HTML tags removed). "
    "Use it to read documentation or articles. Only public addresses; long pages are cut. "
    "The user may be asked to approve each fetch.",
    ToolLabel.NETWORK, FetchUrlArgs, _fetch)
"""The ``fetch_url`` tool."""
