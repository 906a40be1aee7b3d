"""Every response carries the CSP and framing/sniffing/referrer headers, and no template puts a value
inside JavaScript (a server name like `Y'+alert(43)+'` ran as script in an inline onsubmit)."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from tests.web.conftest import login

TEMPLATES = Path(__file__).resolve().parents[2] / "app" / "web" / "templates"
PAGES = ["/", "/recommendations", "/recommendations/1", "/heatmap", "/scripts", "/ilm", "/targets", "/policies",
         "/reports", "/targets/demo%3ASQLPROD01", "/account"]  # fmt: skip


def _assert_headers(headers: object, where: str) -> None:
    h = {k.lower(): v for k, v in dict(headers).items()}  # type: ignore[call-overload]
    csp = h.get("content-security-policy", "")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0], (
        where
    )
    assert "frame-ancestors 'none'" in csp and "style-src 'self'" in csp, where
    assert h.get("x-frame-options") == "DENY", where
    assert h.get("x-content-type-options") == "nosniff", where
    assert h.get("referrer-policy") == "same-origin", where


def test_every_kind_of_response_carries_the_headers(app_client: TestClient) -> None:
    for path in ("/login", "/static/style.css", "/api/health", "/api/targets", "/nowhere"):
        _assert_headers(app_client.get(path).headers, path)  # pages, files, JSON, 401 and 404 alike
    c = login(app_client, "ada")
    for path in PAGES:
        r = c.get(path)
        assert r.status_code == 200, path
        _assert_headers(r.headers, path)


def test_no_template_has_inline_script_or_style() -> None:
    """Under the CSP these would not run (scripts) or apply (styles); and a value inside JavaScript is
    not protected by HTML escaping. Behaviour lives in /static/app.js, reading data-* attributes."""
    for t in TEMPLATES.glob("*.html"):
        text = t.read_text()
        assert not re.search(r"\son[a-z]+\s*=", text, re.I), t.name
        assert not re.search(r"<script(?![^>]*\bsrc=)", text, re.I), t.name
        assert not re.search(r"\sstyle\s*=", text, re.I) and "<style" not in text, t.name
        assert "javascript:" not in text.lower(), t.name


def test_rendered_pages_have_no_inline_script_or_style(app_client: TestClient) -> None:
    """Also what Python adds (charts, highlighted scripts): every page as served."""
    c = login(app_client, "ada")
    from sqlalchemy import select

    from app.store.models import ScriptRecord

    r = c.get("/recommendations", params={"status": "open"})
    ids = re.findall(r'name="ids" value="(\d+)"', r.text)[:1]
    token = re.search(r'name="csrf_token" value="([^"]+)"', r.text)
    assert ids and token
    c.post("/recommendations/review", data={"ids": ids, "action": "approve", "csrf_token": token.group(1)})
    with c.app.state.tierwise.store.session() as s:  # type: ignore[attr-defined]
        script_id = s.scalar(select(ScriptRecord.id))
    assert script_id is not None
    for path in [*PAGES, f"/scripts/{script_id}", f"/recommendations/{ids[0]}"]:
        html = c.get(path).text
        assert not re.search(r"<[^>]+\s(on[a-z]+|style)\s*=", html, re.I), path
        assert not re.search(r"<script(?![^>]*\bsrc=)", html, re.I), path


def test_target_name_reaches_the_confirm_as_an_attribute(app_client: TestClient) -> None:
    from datetime import UTC, datetime

    from app.store.targets import add_target

    name = "Y'+alert(43)+'</script><script>alert(1)</script>"
    with app_client.app.state.tierwise.store.session() as s:  # type: ignore[attr-defined]
        add_target(s, name=name, engine="sqlserver", source="import", connection_encrypted=None,
                   password_env=None, poll_interval_s=300, now=datetime.now(UTC))  # fmt: skip
    html = login(app_client, "ada").get("/targets").text
    assert (
        'data-confirm="Remove Y&#39;+alert(43)+&#39;&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;'
        in html
    )
    assert "<script>alert" not in html and "onsubmit" not in html
