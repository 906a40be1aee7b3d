"""One error vocabulary (app/errors.py): a service raises NotFound, Conflict or Invalid (or a
subclass of its own), and app/main.py answers with the status code and the message, as JSON for
/api and JSON clients and as the site's error page for a browser. No route maps them by hand."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app import review
from app.errors import Conflict, Invalid, NotFound, TierwiseError
from app.mail.service import SubscriptionError
from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.recommendations import RecommendationNotFound, ReviewError
from app.store.users import add_user

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
PASSWORD = "correct horse battery"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """The real application (no demo fleet, no scheduler) with an approver, plus three routes that
    raise each kind of error, one under /api and one page each."""
    settings = settings.model_copy(update={"demo": False, "scheduler_enabled": False})
    store = Store(settings.database_url)
    with store.session() as s:
        add_user(s, username="abe", password=PASSWORD, role="approver", now=datetime.now(UTC))
    store.dispose()
    app = create_app(settings)
    errors: dict[str, TierwiseError] = {
        "missing": NotFound("no widget #7"),
        "busy": Conflict("widget #7 is locked"),
        "bad": SubscriptionError("must be e-mail addresses", "recipients"),
    }
    for name, exc in errors.items():
        app.add_api_route(f"/api/test-errors/{name}", _raiser(exc))
        app.add_api_route(f"/test-errors/{name}", _raiser(exc))
    with TestClient(app) as c:
        yield c


def _raiser(exc: TierwiseError) -> Callable[[], None]:
    def fail() -> None:
        raise exc

    return fail


def _login(client: TestClient) -> None:
    page = client.get("/login").text
    token = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    r = client.post("/login", data={"username": "abe", "password": PASSWORD, "csrf_token": token},
                    follow_redirects=False)  # fmt: skip
    assert r.status_code == 303


@pytest.mark.parametrize(
    ("name", "code", "detail", "title"),
    [
        ("missing", 404, "no widget #7", "Not found"),
        ("busy", 409, "widget #7 is locked", "Conflict"),
        ("bad", 422, "recipients: must be e-mail addresses", "Bad value"),
    ],
)
def test_each_error_is_json_for_the_api_and_a_page_for_a_browser(
    client: TestClient, name: str, code: int, detail: str, title: str
) -> None:
    api = client.get(f"/api/test-errors/{name}", headers=BROWSER)  # /api is JSON whatever is accepted
    assert api.status_code == code and api.json() == {"detail": detail}
    script = client.get(f"/test-errors/{name}")  # */*: a script, not a browser
    assert script.status_code == code and script.json() == {"detail": detail}
    asked = client.get(f"/test-errors/{name}", headers={"Accept": "application/json"})
    assert asked.status_code == code and asked.json() == {"detail": detail}
    page = client.get(f"/test-errors/{name}", headers=BROWSER)
    assert page.status_code == code and page.headers["content-type"].startswith("text/html")
    assert f"<title>{title}" in page.text and detail in page.text
    assert 'href="/recommendations"' not in page.text  # nobody signed in: no navigation


def test_the_error_page_keeps_the_signed_in_navigation(client: TestClient) -> None:
    _login(client)
    page = client.get("/test-errors/busy", headers=BROWSER)
    assert page.status_code == 409 and 'href="/recommendations"' in page.text


def test_real_routes_answer_through_the_vocabulary(client: TestClient) -> None:
    """Routes that only call the service: an unknown recommendation is a 404 from the review
    service and the scripts API alike, JSON for /api and a page for the browser."""
    _login(client)
    csrf = client.get("/api/session").json()["csrf_token"]
    headers = {"X-CSRF-Token": csrf}
    r = client.post("/api/recommendations/424242/review", json={"action": "approve"}, headers=headers)
    assert r.status_code == 404 and r.json() == {"detail": "no recommendation #424242"}
    r = client.post("/api/recommendations/424242/executed", json={}, headers=headers)
    assert r.status_code == 404 and r.json() == {"detail": "no recommendation #424242"}
    r = client.post(
        "/api/recommendations/424242/executed", json={"executed_at": "2999-01-01"}, headers=headers
    )
    assert r.status_code == 422 and r.json() == {"detail": "executed_at is in the future"}
    r = client.post("/api/recommendations/424242/suppress", headers=headers,
                    json={"reason": "batch window", "expires_at": "2999-01-01"})  # fmt: skip
    assert r.status_code == 404 and r.json() == {"detail": "no recommendation #424242"}
    r = client.post("/api/suppressions/424242/lift", headers=headers)
    assert r.status_code == 404 and r.json() == {"detail": "no suppression #424242"}
    assert client.get("/api/recommendations/424242/scripts").status_code == 404
    page = client.get("/recommendations/424242", headers=BROWSER)
    assert page.status_code == 404 and "no recommendation #424242" in page.text
    assert "<title>Not found" in page.text
    r = client.post("/api/subscriptions", headers=headers,
                    json={"name": "weekly", "recipients": "ops", "scope": "fleet"})  # fmt: skip
    assert r.status_code == 422
    assert r.json()["detail"].startswith("recipients: recipients must be e-mail addresses")


def test_domain_errors_name_their_status_through_their_bases() -> None:
    """A class with two bases takes the more specific one's status (listed first)."""
    assert issubclass(RecommendationNotFound, ReviewError)  # callers that catch ReviewError still do
    assert RecommendationNotFound.status_code == 404
    assert ReviewError.status_code == review.ScriptsRefused.status_code == 409
    assert review.SuppressionMissing.status_code == 404
    assert review.SuppressionRefused.status_code == 422
    assert review.SuppressionEnded.status_code == 409
    assert issubclass(review.SuppressionEnded, review.SuppressionError)
    assert issubclass(Invalid, ValueError) and issubclass(NotFound, LookupError)
    assert SubscriptionError("x", "cron").detail == "cron: x" and Conflict("y").detail == "y"


def test_no_route_maps_a_domain_error_to_a_status_by_hand() -> None:
    """The routes of the API and of the pages this refactor cleaned catch no domain error to raise
    an HTTPException from it (`except ...: raise HTTPException(...)`)."""
    modules = [*(ROOT / "app" / "api").glob("*.py"), *(ROOT / "app" / "web" / p for p in (
        "pages.py", "scripts_pages.py", "reports.py", "plans.py", "admin.py", "objects.py"))]  # fmt: skip
    offenders = []
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Raise) and "HTTPException" in ast.unparse(inner):
                        offenders.append(f"{path.parent.name}/{path.name}:{node.lineno}")
    assert not offenders, offenders


def test_object_pages_answer_a_missing_object_or_target_through_the_vocabulary(client: TestClient) -> None:
    """The object, heat-map and flash-curve routes let the store's NotFound through: a 404 page for
    a browser, {"detail": ...} for /api, with the store's message."""
    _login(client)
    for url, detail in (
        ("/api/objects/424242", "no object #424242"),
        ("/api/objects/424242/evidence", "no object #424242"),
        ("/api/targets/nope/objects", "no target named 'nope'"),
        ("/api/targets/nope/flash-curve", "no target named 'nope'"),
        ("/api/heatmap?target=nope", "no target named 'nope'"),
    ):
        r = client.get(url)
        assert r.status_code == 404 and r.json() == {"detail": detail}, url
    for url, detail in (
        ("/objects/424242", "no object #424242"),
        ("/targets/nope", "no target named &#39;nope&#39;"),
        ("/heatmap?target=nope", "no target named &#39;nope&#39;"),
    ):
        page = client.get(url, headers=BROWSER)
        assert page.status_code == 404 and "<title>Not found" in page.text and detail in page.text, url
