"""Errors a browser meets are pages in the site's layout; /api and JSON clients keep JSON; a 500
never shows a traceback or a credential."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.web.conftest import login

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
SECRET = "Driver={ODBC Driver 18};Server=db01;UID=tw;PWD={s3cr}}et;x}"


def test_unknown_page_is_a_404_page_in_the_layout(app_client: TestClient) -> None:
    login(app_client, "vera")
    r = app_client.get("/no/such/page", headers=BROWSER)
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "Not found" in r.text and "There is no page at /no/such/page." in r.text
    assert 'href="/recommendations"' in r.text  # the signed-in navigation of base.html


def test_unknown_target_page_names_what_was_asked_for(app_client: TestClient) -> None:
    login(app_client, "vera")
    r = app_client.get("/targets/nosuchtarget", headers=BROWSER)
    assert r.status_code == 404 and "text/html" in r.headers["content-type"]
    assert "nosuchtarget" in r.text and "<title>Not found" in r.text


def test_api_and_json_clients_keep_json(app_client: TestClient) -> None:
    login(app_client, "vera")
    api = app_client.get("/api/recommendations/999999999/nothing", headers=BROWSER)
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
    asked = app_client.get("/no/such/page", headers={"Accept": "application/json"})
    assert asked.status_code == 404 and asked.json() == {"detail": "Not Found"}
    plain = app_client.get("/no/such/page")  # */*: a script, not a browser
    assert plain.json() == {"detail": "Not Found"}


def test_forbidden_form_is_a_403_page(app_client: TestClient) -> None:
    login(app_client, "vera")
    r = app_client.post("/account/password", data={"csrf_token": "wrong", "current": "x", "new": "y" * 8,
                                                    "again": "y" * 8}, headers=BROWSER)  # fmt: skip
    assert r.status_code == 403 and "text/html" in r.headers["content-type"]
    assert "Not allowed" in r.text and "CSRF" in r.text


def test_bad_query_value_is_a_422_page_naming_the_field(app_client: TestClient) -> None:
    login(app_client, "vera")
    r = app_client.get("/targets/1?page=lots", headers=BROWSER)
    assert r.status_code == 422 and "text/html" in r.headers["content-type"]
    assert "Bad value" in r.text and "page" in r.text
    api = app_client.get("/api/recommendations?limit=lots", headers=BROWSER)
    assert api.status_code == 422 and api.json()["detail"][0]["loc"] == ["query", "limit"]


def test_logged_out_browser_still_gets_a_page(app_client: TestClient) -> None:
    r = app_client.get("/no/such/page", headers=BROWSER)
    assert r.status_code == 404 and 'href="/login"' in r.text
    assert 'href="/recommendations"' not in r.text


@pytest.fixture
def failing_client(web_settings: Settings) -> Iterator[TestClient]:
    """The real app with one extra route that fails the way a broken connector would: with a
    connection string in the exception's text."""
    app = create_app(web_settings)

    def boom() -> None:
        raise RuntimeError(f"cannot connect with {SECRET}")

    app.add_api_route("/boom", boom)
    app.add_api_route("/api/boom", boom)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def test_500_page_shows_no_traceback_and_no_credential(failing_client: TestClient) -> None:
    r = failing_client.get("/boom", headers=BROWSER)
    assert r.status_code == 500 and "text/html" in r.headers["content-type"]
    assert "Something went wrong" in r.text and "Reference " in r.text
    for leak in ("s3cr", "PWD", "Traceback", "RuntimeError", "cannot connect"):
        assert leak not in r.text
    api = failing_client.get("/api/boom", headers=BROWSER)
    assert api.status_code == 500 and api.json()["detail"].startswith("The server could not answer")
    assert "s3cr" not in api.text


def test_every_template_has_its_context_documented() -> None:
    from app.web.templating import PAGE_CONTEXTS, TEMPLATE_DIR

    pages = {p.name for p in TEMPLATE_DIR.glob("*.html")} - {"base.html"}
    assert pages - set(PAGE_CONTEXTS) == set(), "add the page's context to app.web.templating.PAGE_CONTEXTS"
    assert set(PAGE_CONTEXTS) - pages == set(), "PAGE_CONTEXTS names a template that no longer exists"


def _template_locals(ast: Any) -> set[str]:
    """Names a template assigns itself ({% set %}, loop and macro variables): not context."""
    from jinja2 import nodes

    names: set[str] = set()
    for node in ast.find_all((nodes.Assign, nodes.For, nodes.Macro, nodes.With)):
        targets = [node.target] if isinstance(node, nodes.Assign | nodes.For) else []
        if isinstance(node, nodes.Macro):
            names.add(node.name)
            targets = list(node.args)
        if isinstance(node, nodes.With):
            targets = list(node.targets)
        for t in targets:
            names.update(n.name for n in t.find_all(nodes.Name))
            if isinstance(t, nodes.Name):
                names.add(t.name)
    return names


def test_each_template_reads_only_documented_context() -> None:
    """The documented contexts are the contexts: every variable a template reads from its handler is
    listed for it (or for every page in BASE_CONTEXT), and no listed variable is left unread."""
    from jinja2 import meta

    from app.web.templating import BASE_CONTEXT, PAGE_CONTEXTS, TEMPLATE_DIR, templates

    for path in sorted(TEMPLATE_DIR.glob("*.html")):
        ast = templates.env.parse(path.read_text(encoding="utf-8"))
        reads = meta.find_undeclared_variables(ast) - _template_locals(ast)
        documented = set(PAGE_CONTEXTS.get(path.name, {}))
        assert reads - documented - set(BASE_CONTEXT) == set(), f"{path.name}: undocumented context"
        assert documented - reads == set(), f"{path.name}: documented but never read"
