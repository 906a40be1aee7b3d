"""The API refuses abuse cheaply: bodies over the limit before any login check, short 422s, 422 (not
500) for NaN/Infinity, unknown filter values refused, the schema and docs behind login, and the
executed-at time kept in the zone it was given in."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from app.web.security import MAX_BODY_BYTES
from tests.web.conftest import csrf_of, login


def _headers(c: TestClient) -> dict[str, str]:
    return {"X-CSRF-Token": c.get("/api/session").json()["csrf_token"]}


def test_oversized_body_is_refused_before_login(app_client: TestClient) -> None:
    big = b'{"action": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
    r = app_client.post(
        "/api/recommendations/1/review", content=big, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 413 and "too large" in r.text  # not 401: the body was never handed on
    r = app_client.post("/login", content=b"a=" + b"x" * (MAX_BODY_BYTES + 1),
                        headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert r.status_code == 413
    assert r.headers["x-content-type-options"] == "nosniff"  # the refusal carries the headers too


def test_streamed_body_is_counted_and_cut_at_the_limit(app_client: TestClient) -> None:
    """No Content-Length (chunked): counted as it arrives, refused once past the limit."""
    sent = [0]

    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            sent[0] += 1
            yield b"x" * (MAX_BODY_BYTES // 16)

    c = login(app_client, "abe")
    r = c.post("/api/recommendations/1/review", content=chunks(),
               headers={"Content-Type": "application/json", **_headers(c)})  # fmt: skip
    assert r.status_code == 413
    r = c.post("/recommendations/review", content=chunks(),
               headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert r.status_code == 413


def test_a_body_under_the_limit_still_works(app_client: TestClient) -> None:
    c = login(app_client, "abe")
    token = csrf_of(c.get("/policies").text)
    r = c.post("/recommendations/suppress", data={"ids": [], "reason": "x" * 100_000, "csrf_token": token},
               follow_redirects=False)  # fmt: skip
    assert r.status_code == 303


def test_422_does_not_echo_a_large_input(app_client: TestClient) -> None:
    c = login(app_client, "abe")
    r = c.post("/api/recommendations/1/review", json={"action": "y" * 500_000}, headers=_headers(c))
    assert r.status_code == 422 and len(r.content) < 2_000, len(r.content)
    assert "500000 characters" in r.text
    r = c.post("/api/recommendations/1/suppress", json={"reason": "r", "expires_at": ["x"] * 100_000},
               headers=_headers(c))  # fmt: skip
    assert r.status_code == 422 and len(r.content) < 2_000, len(r.content)


def test_non_finite_numbers_are_422_not_500(app_client: TestClient) -> None:
    c = login(app_client, "abe")
    for literal in ("NaN", "Infinity", "-Infinity"):
        for body in (f'{{"action": {literal}}}', f'{{"action": "approve", "comment": "c", "x": [{literal}]}}',
                     f'{{"reason": "r", "expires_at": {literal}}}'):  # fmt: skip
            for url in ("/api/recommendations/1/review", "/api/recommendations/1/suppress"):
                r = c.post(url, content=body, headers={"Content-Type": "application/json", **_headers(c)})
                assert r.status_code == 422, (url, body, r.status_code, r.text[:200])
    # no Content-Type (FastAPI still parses JSON) or a JSON one after a harmless first: checked too
    for headers in ({}, {"Content-Type": "application/json; charset=utf-8"}):
        r = c.post("/api/recommendations/1/suppress", content='{"reason": "r", "expires_at": NaN}',
                   headers={**headers, **_headers(c)})  # fmt: skip
        assert r.status_code == 422 and "NaN is not a JSON number" in r.text, (headers, r.text[:200])
    r = c.post(
        "/api/recommendations/1/review",
        content=b"{not json",
        headers={"Content-Type": "application/json", **_headers(c)},
    )
    assert r.status_code == 422  # malformed JSON is still the route's usual answer


def test_unknown_filter_values_are_422(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    for url in ("/api/recommendations", "/api/recommendations.csv", "/api/recommendations.xlsx",
                "/api/verifications"):  # fmt: skip
        assert c.get(url, params={"status": "opne"}).status_code == 422, url
    assert c.get("/api/recommendations", params={"engine": "oracle"}).status_code == 422
    assert c.get("/api/recommendations", params={"status": "open"}).status_code == 200
    assert c.get("/api/verifications", params={"status": "waiting"}).status_code == 200
    c = login(app_client, "abe")
    r = c.post("/api/recommendations/1/review", json={"action": "approve; drop"}, headers=_headers(c))
    assert r.status_code == 422  # was 409 from the store, after a lookup


def test_docs_and_schema_need_a_login(app_client: TestClient) -> None:
    assert app_client.get("/openapi.json").status_code == 401
    assert app_client.get("/docs", follow_redirects=False).status_code == 303
    assert app_client.get("/redoc").status_code == 404
    c = login(app_client, "vera")
    assert "/api/recommendations" in c.get("/openapi.json").json()["paths"]
    docs = c.get("/docs")
    assert docs.status_code == 200 and "swagger-ui" in docs.text
    csp = docs.headers["content-security-policy"]
    inline = re.search(r"script-src ([^;]+)", csp)
    assert inline and "'sha256-" in inline.group(1) and "unsafe-inline" not in inline.group(1)


def _approved_id(c: TestClient) -> int:
    items = c.get("/api/recommendations", params={"status": "open", "limit": 5}).json()["items"]
    rec_id = int(items[0]["id"])
    r = c.post(f"/api/recommendations/{rec_id}/review", json={"action": "approve"}, headers=_headers(c))
    assert r.status_code == 200, r.text
    return rec_id


def test_executed_at_keeps_the_offset_given(app_client: TestClient) -> None:
    c = login(app_client, "abe")
    ran = (datetime.now(UTC) - timedelta(hours=5)).replace(second=0, microsecond=0)
    local = ran.astimezone(__import__("datetime").timezone(timedelta(hours=2)))
    # the form (a time with +02:00 used to be read as that wall-clock time in UTC)
    rec_id = _approved_id(c)
    token = csrf_of(c.get("/scripts").text)
    r = c.post(f"/recommendations/{rec_id}/executed", data={"executed_at": local.isoformat(), "csrf_token": token},
               follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == "/scripts"
    assert f"#{rec_id} marked executed by abe" in c.get("/scripts").text  # the confirmation, shown once
    [item] = [i for i in c.get("/api/recommendations", params={"status": "executed"}).json()["items"]
              if i["id"] == rec_id]  # fmt: skip
    events = c.get("/api/audit").json()
    assert any(f"run on {ran:%Y-%m-%d %H:%M} UTC" in e["summary"] for e in events), events[:3]
    # the API
    rec_id = _approved_id(c)
    r = c.post(f"/api/recommendations/{rec_id}/executed", json={"executed_at": local.isoformat()},
               headers=_headers(c))  # fmt: skip
    assert r.status_code == 200 and datetime.fromisoformat(r.json()["executed_at"]) == ran
    assert any(
        f"#{rec_id}" in e["subject_id"] or e["subject_id"] == str(rec_id) for e in c.get("/api/audit").json()
    )
    assert item["status"] == "executed"
