"""The web app fixtures (demo fleet, logged-in clients) for the subscription form and API tests here,
and the SMTP server and advised demo store of test_reports.py for the other report tests."""

from tests.mail.test_reports import demo_store, smtp  # noqa: F401
from tests.web.conftest import app_client, web_settings  # noqa: F401
