"""The web app fixtures (demo fleet, logged-in clients) for the subscription form and API tests here."""

from tests.web.conftest import app_client, web_settings  # noqa: F401
