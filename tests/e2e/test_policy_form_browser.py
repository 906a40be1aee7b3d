"""The Policy page's form in headless Chromium: a capacity the model refuses is shown next to its
field while typing (no submit), fixing it clears the message, saving works and the new value is
there after a reload; the page loads no inline script (the CSP would refuse it) and reports no
console error. Screenshots: test-artifacts/screenshots/3z-policy-form-error.png, 3z-policy-form.png."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from app.demo import DEMO_PASSWORD, DEMO_USER
from tests.e2e.conftest import shot


def test_the_policy_form_checks_as_you_type_and_saves(server: str, page: Page) -> None:
    problems: list[str] = []
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    # a CSP refusal is a console error; a failed load is the line above (Chromium's own favicon.ico is not)
    page.on(
        "console",
        lambda m: problems.append(m.text) if m.type == "error" and "Failed to load" not in m.text else None,
    )
    page.on("pageerror", lambda e: problems.append(str(e)))
    checks: list[str] = []
    page.on("request", lambda r: checks.append(r.method) if r.url.endswith("/policies/validate") else None)

    page.goto(server + "/login")
    page.get_by_label("User name").fill(DEMO_USER)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Fleet")).to_be_visible()
    page.goto(server + "/policies")
    expect(page.get_by_role("heading", name="Pools and tiers")).to_be_visible()

    capacity = page.get_by_label("fc: Usable capacity (GB)")
    error = page.locator('[data-error-for="tiers[1].capacity_gb"]')
    expect(capacity).to_have_value("28800")
    expect(error).to_be_empty()
    capacity.fill("-28800")  # typed, not submitted
    expect(error).to_have_text("Input should be greater than 0")
    expect(capacity).to_have_attribute("aria-invalid", "true")
    expect(page.locator("[data-validate-status]")).to_have_text("1 problem: see the marked field.")
    assert page.url == server + "/policies" and checks and set(checks) == {"POST"}
    shot(page, "3z-policy-form-error")

    capacity.fill("38400")
    expect(error).to_be_empty()
    expect(capacity).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("[data-validate-status]")).to_have_text("The values are valid: 1 change to save.")

    page.locator("#form-comment").fill("fc grew to 38.4 TB")
    page.get_by_role("button", name="Save pools and tiers").click()
    expect(page.get_by_role("status").first).to_contain_text("policy saved from the form")
    expect(page.get_by_role("status").first).to_contain_text("tiers[1].capacity_gb: 28800 → 38400")
    page.reload()
    expect(page.get_by_label("fc: Usable capacity (GB)")).to_have_value("38400")
    expect(page.get_by_role("row").filter(has_text="fc grew to 38.4 TB")).to_be_visible()  # the History
    shot(page, "3z-policy-form")
    assert problems == [], problems


def test_the_form_works_without_javascript(server: str, page: Page) -> None:
    """Scripts off: the save checks the values and shows the problem next to the field (422)."""
    context = page.context.browser.new_context(java_script_enabled=False) if page.context.browser else None
    assert context is not None
    plain = context.new_page()
    plain.goto(server + "/login")
    plain.get_by_label("User name").fill(DEMO_USER)
    plain.get_by_label("Password").fill(DEMO_PASSWORD)
    plain.get_by_role("button", name="Log in").click()
    plain.goto(server + "/policies")
    plain.get_by_label("sata: Devices").fill("0")
    plain.get_by_role("button", name="Save pools and tiers").click()
    expect(plain.locator('[data-error-for="tiers[2].devices"]')).to_have_text(
        "Input should be greater than 0"
    )
    expect(plain.locator("[data-validate-status]")).to_have_text(
        "Not saved: 1 problem, shown next to its field."
    )
    plain.goto(server + "/policies")
    expect(plain.get_by_label("sata: Devices")).to_have_value("12")
    context.close()
