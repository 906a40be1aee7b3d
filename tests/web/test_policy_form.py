"""The Policy page's form: it shows the policy's pools and tiers, a save changes exactly the edited
fields and keeps every other key, the model's refusals come back next to their fields (nothing
saved), the JSON check answers as the save would, and only admins save (CSRF-checked, audited)."""

from __future__ import annotations

import copy
import html
from html.parser import HTMLParser
from typing import Any

import yaml
from fastapi.testclient import TestClient

from app.web.policy_form import Edit, _path, _place, form_of
from policies.loader import DEFAULT_POLICY, parse_policy
from tests.web.conftest import csrf_of, login

DEFAULT = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))


class FormPage(HTMLParser):
    """One form of a page as a browser sees it: the values it would submit, the text of each error
    slot (data-error-for), which controls are marked invalid, and whether its fields are disabled."""

    def __init__(self, page: str, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.values: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.invalid: set[str] = set()
        self.disabled = False
        self.buttons: list[str] = []
        self._slot: str | None = None
        self._textarea: str | None = None
        self._select: str | None = None
        self._first_option: str | None = None
        self._button = False
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = True
        if not self.inside:
            return
        if "data-error-for" in a:
            self._slot = a["data-error-for"]
            self.errors[self._slot] = ""
        if a.get("aria-invalid") == "true":
            self.invalid.add(a.get("name", ""))
        if tag == "fieldset" and "disabled" in a:
            self.disabled = True
        if tag == "input" and a.get("name"):
            if a.get("type") != "checkbox" or "checked" in a:
                self.values[a["name"]] = a.get("value", "")
        elif tag == "textarea":
            self._textarea = a["name"]
            self.values[a["name"]] = ""
        elif tag == "select":
            self._select, self._first_option = a["name"], None
        elif tag == "option" and self._select is not None:
            if self._first_option is None:
                self._first_option = a.get("value", "")
                self.values[self._select] = self._first_option
            if "selected" in a:
                self.values[self._select] = a.get("value", "")
        elif tag == "button":
            self._button = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None
        elif tag == "span" or tag == "div":
            self._slot = None
        elif tag == "button":
            self._button = False

    def handle_data(self, data: str) -> None:
        if not self.inside:
            return
        if self._textarea is not None:
            self.values[self._textarea] += (
                data.removeprefix("\n") if not self.values[self._textarea] else data
            )
        if self._slot is not None:
            self.errors[self._slot] += data
        if self._button:
            self.buttons.append(data.strip())


def _form(client: TestClient) -> FormPage:
    return FormPage(client.get("/policies").text, "policy-form")


def _yaml_in_force(client: TestClient) -> dict[str, Any]:
    """The policy in force, as the page's YAML view shows it (admins edit it, others read it)."""
    page = client.get("/policies").text
    opening, closing = (
        ('aria-label="policy YAML">', "</textarea>")
        if "policy YAML" in page
        else ('<pre class="card">', "</pre>")
    )
    start = page.index(opening) + len(opening)
    data: dict[str, Any] = yaml.safe_load(html.unescape(page[start : page.index(closing, start)]))
    return data


def _policy_edits(client: TestClient) -> list[dict[str, Any]]:
    return [e for e in client.get("/api/audit").json() if e["action"] == "edit_policy"]


def test_the_form_shows_every_tier_and_its_values(app_client: TestClient) -> None:
    form = _form(login(app_client, "ada"))
    v = form.values
    assert (v["tiers[0].name"], v["tiers[1].name"], v["tiers[2].name"]) == ("flash", "fc", "sata")
    assert (v["tiers[1].capacity_gb"], v["tiers[1].devices"], v["tiers[1].device_iops"]) == (
        "28800",
        "48",
        "140",
    )
    assert (v["tiers[0].raid_level"], v["tiers[1].raid_level"], v["tiers[2].raid_level"]) == ("5", "10", "6")
    assert (v["tiers[2].read_latency_ms"], v["tiers[2].write_latency_ms"]) == ("12.5", "4")
    assert (v["tiers[1].read_latency_band_ms[0]"], v["tiers[1].read_latency_band_ms[1]"]) == ("6", "10")
    assert (v["tiers[0].endurance_dwpd"], v["tiers[1].endurance_dwpd"]) == ("1", "")
    assert (v["tiers[0].cost_per_gb"], v["tiers[2].cost_per_gb"]) == ("1", "0.05")
    assert v["tiers[0].locations.sqlserver_path_prefixes"] == "E:\\MSSQL\\FLASH\\"
    assert v["tiers[1].locations.db2_storage_groups"] == "SG_SAS\nIBMSTOGROUP"
    assert v["tiers[2].locations.db2_path_prefixes"] == "/db2/nlsas/"
    assert v["tiers[0].description"].startswith("SAS or NVMe SSDs")
    assert v["tiers[new].name"] == "" and v["tiers[new].raid_level"] == ""  # the tier one may add
    assert not form.disabled and "Save pools and tiers" in form.buttons
    page = app_client.get("/policies").text
    assert "comments are not kept" in page and 'id="unknown-locations"' in page and "<h2>History</h2>" in page
    assert '<script src="/static/policy-form.js" defer></script>' in page
    assert "3.8 TB of host writes a day" in page  # what follows from the flash tier's figures (3,840 GB)


def test_a_form_save_changes_exactly_the_edited_fields(app_client: TestClient) -> None:
    form = _form(login(app_client, "ada"))
    before = _yaml_in_force(app_client)
    assert before == DEFAULT
    fields = {**form.values, "comment": "bigger fc, a second flash volume"}
    fields["tiers[1].capacity_gb"] = "8000"
    fields["tiers[0].locations.sqlserver_path_prefixes"] = (
        "E:\\MSSQL\\FLASH\\\r\nG:\\nvme\\\r\n"  # as a browser sends it
    )
    fields["tiers[1].endurance_dwpd"] = "1.5"
    fields["tiers[0].read_latency_band_ms[1]"] = "2.5"
    r = app_client.post("/policies/form", data=fields, follow_redirects=False)
    assert r.status_code == 303, r.text
    page = app_client.get(r.headers["location"]).text
    assert "policy saved from the form" in html.unescape(page)
    after = _yaml_in_force(app_client)
    expected = copy.deepcopy(before)
    expected["tiers"][1]["capacity_gb"] = 8000
    expected["tiers"][0]["locations"]["sqlserver_path_prefixes"] = ["E:\\MSSQL\\FLASH\\", "G:\\nvme\\"]
    expected["tiers"][1]["endurance_dwpd"] = 1.5
    expected["tiers"][0]["read_latency_band_ms"] = [0, 2.5]
    assert after == expected  # pins, ILM, change windows, every other key: as they were
    assert parse_policy(yaml.safe_dump(after), source="after").tiers[1].capacity_gb == 8000
    shown = _form(app_client).values
    assert shown["tiers[1].capacity_gb"] == "8000" and shown["tiers[1].endurance_dwpd"] == "1.5"
    edits = _policy_edits(app_client)
    assert len(edits) == 1 and edits[0]["username"] == "ada"
    assert "tiers[1].capacity_gb: 28800 → 8000" in edits[0]["summary"]
    assert edits[0]["comment"] == "bigger fc, a second flash volume"
    assert "bigger fc, a second flash volume" in app_client.get("/policies").text  # the History


def test_an_unchanged_form_saves_nothing(app_client: TestClient) -> None:
    form = _form(login(app_client, "ada"))
    r = app_client.post("/policies/form", data=form.values)
    assert r.status_code == 200 and "nothing to save" in html.unescape(r.text)
    assert _policy_edits(app_client) == [] and "not edited yet" in r.text


def _refused(client: TestClient, **changes: str) -> FormPage:
    form, edits = _form(client), len(_policy_edits(client))
    r = client.post("/policies/form", data={**form.values, **changes})
    assert r.status_code == 422, r.text[:500]
    assert len(_policy_edits(client)) == edits, "a refused form saved a version"
    return FormPage(r.text, "policy-form")


def test_invalid_values_come_back_next_to_their_fields_and_nothing_is_saved(app_client: TestClient) -> None:
    login(app_client, "ada")
    got = _refused(app_client, **{"tiers[1].capacity_gb": "-5", "tiers[2].raid_level": "7",
                                  "tiers[0].read_latency_band_ms[1]": "", "tiers[2].devices": "2.5"})  # fmt: skip
    assert got.errors["tiers[1].capacity_gb"] == "Input should be greater than 0"
    assert got.errors["tiers[2].raid_level"] == "Input should be 0, 1, 5, 6 or 10"
    assert got.errors["tiers[0].read_latency_band_ms"].startswith("high: Input should be a valid number")
    assert "valid integer" in got.errors["tiers[2].devices"]
    assert got.errors["tiers[0].capacity_gb"] == "" and got.errors[""] == ""
    assert {"tiers[1].capacity_gb", "tiers[2].raid_level"} <= got.invalid
    assert got.values["tiers[1].capacity_gb"] == "-5"  # the submitted values are shown again
    assert _yaml_in_force(app_client) == DEFAULT


def test_a_duplicate_tier_name_is_shown_at_both_names(app_client: TestClient) -> None:
    login(app_client, "ada")
    got = _refused(app_client, **{"tiers[2].name": "fc"})
    assert got.errors["tiers[1].name"] == got.errors["tiers[2].name"] == "tier names must be unique: fc"
    assert got.errors["tiers[0].name"] == "" and got.errors[""] == ""


def test_a_problem_of_the_whole_policy_is_shown_above_the_form(app_client: TestClient) -> None:
    """Renaming a tier the pins name: the model refuses the policy, not one field; the message says
    which pin, and the name field gets no blame (renaming it alone does not fix the pins)."""
    login(app_client, "ada")
    got = _refused(app_client, **{"tiers[2].name": "nlsas"})
    assert "pins[0] names unknown tier 'sata'" in got.errors[""]
    assert got.errors["tiers[2].name"] == ""


def test_a_tier_is_added_before_another_and_one_removed(app_client: TestClient) -> None:
    form = _form(login(app_client, "ada"))
    new = {"name": "nvme", "capacity_gb": "800", "devices": "4", "device_iops": "50000", "raid_level": "10",
           "read_latency_ms": "0.2", "write_latency_ms": "0.1", "cost_per_gb": "25",
           "locations.sqlserver_path_prefixes": "N:\\nvme\\"}  # fmt: skip
    fields = {**form.values, **{f"tiers[new].{k}": v for k, v in new.items()}, "tiers[new].position": "0"}
    # removing sata: the default's pins name it, so the model refuses (pins are edited in the YAML view)
    r = app_client.post("/policies/form", data={**fields, "tiers[2].remove": "on"})
    assert r.status_code == 422 and "names unknown tier 'sata'" in html.unescape(r.text)
    got = FormPage(r.text, "policy-form")
    assert got.values["tiers[2].remove"] == "on" and got.values["tiers[new].name"] == "nvme"
    r = app_client.post("/policies/form", data=fields, follow_redirects=False)
    assert r.status_code == 303, r.text
    after = _yaml_in_force(app_client)
    assert [t["name"] for t in after["tiers"]] == ["nvme", "flash", "fc", "sata"]
    assert after["tiers"][0] == {"name": "nvme", "capacity_gb": 800, "devices": 4, "device_iops": 50000,
                                 "raid_level": 10, "read_latency_ms": 0.2, "write_latency_ms": 0.1,
                                 "cost_per_gb": 25, "locations": {"sqlserver_path_prefixes": ["N:\\nvme\\"]}}  # fmt: skip
    assert after["tiers"][1:] == DEFAULT["tiers"]
    # an added tier the model refuses: its errors are at the new column
    form = _form(app_client)
    r = app_client.post(
        "/policies/form", data={**form.values, "tiers[new].name": "x1", "tiers[new].devices": "0"}
    )
    got = FormPage(r.text, "policy-form")
    assert r.status_code == 422 and got.errors["tiers[new].devices"] == "Input should be greater than 0"
    assert got.errors["tiers[new].capacity_gb"] == "Field required"


def test_the_json_check_answers_as_the_save_would_and_saves_nothing(app_client: TestClient) -> None:
    form = _form(login(app_client, "ada"))
    bad = app_client.post("/policies/validate", data={**form.values, "tiers[1].capacity_gb": "-1"})
    assert bad.status_code == 200 and bad.headers["content-type"].startswith("application/json")
    assert bad.json() == {"valid": False, "changes": ["tiers[1].capacity_gb: 28800 → -1"],
                          "errors": [{"field": "tiers[1].capacity_gb", "message": "Input should be greater than 0"}]}  # fmt: skip
    good = app_client.post("/policies/validate", data={**form.values, "tiers[1].capacity_gb": "9000"}).json()
    assert good == {"valid": True, "errors": [], "changes": ["tiers[1].capacity_gb: 28800 → 9000"]}
    dupe = app_client.post("/policies/validate", data={**form.values, "tiers[0].name": "sata"}).json()
    assert {e["field"] for e in dupe["errors"]} == {"tiers[0].name", "tiers[2].name"}
    assert _policy_edits(app_client) == [] and _yaml_in_force(app_client) == DEFAULT


def test_viewers_see_the_form_read_only_and_cannot_save(app_client: TestClient) -> None:
    page = login(app_client, "vera").get("/policies").text
    form = FormPage(page, "policy-form")
    assert form.disabled and form.buttons == [] and form.values["tiers[1].capacity_gb"] == "28800"
    assert "data-validate" not in page and "Save pools and tiers" not in page
    token = csrf_of(page)
    fields = {**form.values, "csrf_token": token, "tiers[1].capacity_gb": "1"}
    assert app_client.post("/policies/form", data=fields).status_code == 403
    assert app_client.post("/policies/validate", data=fields).status_code == 403
    login(app_client, "abe")  # approvers neither
    assert (
        app_client.post(
            "/policies/form", data={**fields, "csrf_token": csrf_of(app_client.get("/policies").text)}
        ).status_code
        == 403
    )
    assert _yaml_in_force(app_client) == DEFAULT


def test_the_form_needs_the_csrf_token(app_client: TestClient) -> None:
    form = _form(login(app_client, "ada"))
    fields = {**form.values, "tiers[1].capacity_gb": "1"}
    assert app_client.post("/policies/form", data={**fields, "csrf_token": "nope"}).status_code == 403
    assert app_client.post("/policies/validate", data={**fields, "csrf_token": "nope"}).status_code == 403
    no_token = {k: v for k, v in fields.items() if k != "csrf_token"}
    assert app_client.post("/policies/form", data=no_token).status_code == 403
    assert _policy_edits(app_client) == []


def test_a_form_drawn_from_an_older_version_saves_nothing(app_client: TestClient) -> None:
    form = _form(login(app_client, "ada"))
    text = DEFAULT_POLICY.read_text(encoding="utf-8").replace("capacity_gb: 160000", "capacity_gb: 170000")
    r = app_client.post(
        "/policies", data={"yaml_text": text, "comment": "sata grew", "csrf_token": form.values["csrf_token"]}
    )
    assert r.status_code == 200
    r = app_client.post("/policies/form", data={**form.values, "tiers[1].capacity_gb": "8000"})
    assert r.status_code == 409 and "after this form was opened: nothing was saved" in html.unescape(r.text)
    assert len(_policy_edits(app_client)) == 1
    shown = FormPage(r.text, "policy-form").values
    assert shown["tiers[2].capacity_gb"] == "170000" and shown["tiers[1].capacity_gb"] == "28800"
    answer = app_client.post(
        "/policies/validate", data={**form.values, "tiers[1].capacity_gb": "8000"}
    ).json()
    assert answer["valid"] is False and "after this form was opened" in answer["errors"][0]["message"]


def _pooled() -> dict[str, Any]:
    data = copy.deepcopy(DEFAULT)
    data["pools"] = [{"name": "db2-array", "description": "the DB2 server's array", "servers": "DB2PROD*",
                      "tiers": copy.deepcopy(DEFAULT["tiers"][:2])}]  # fmt: skip
    return data


def test_pools_are_edited_with_their_tiers(app_client: TestClient) -> None:
    token = csrf_of(login(app_client, "ada").get("/policies").text)
    r = app_client.post("/policies", data={"yaml_text": yaml.safe_dump(_pooled(), sort_keys=False),
                                           "csrf_token": token})  # fmt: skip
    assert r.status_code == 200
    form = _form(app_client)
    v = form.values
    assert (v["pools[0].name"], v["pools[0].servers"], v["pools[0].description"]) == (
        "db2-array", "DB2PROD*", "the DB2 server's array")  # fmt: skip
    assert v["pools[0].tiers[1].name"] == "fc" and v["pools[0].tiers[0].capacity_gb"] == "6720"
    assert "pools[0].tiers[2].name" not in v and v["tiers[2].name"] == "sata"
    page = app_client.get("/policies").text
    assert "Pool db2-array" in page and "Default pool: servers in no pool above" in page
    # a duplicate tier name in the pool: the pool's own rule, shown at both names
    got = _refused(app_client, **{"pools[0].tiers[1].name": "flash"})
    assert got.errors["pools[0].tiers[0].name"] == got.errors["pools[0].tiers[1].name"]
    assert "tier names must be unique within the pool: flash" in got.errors["pools[0].tiers[0].name"]
    assert got.errors["tiers[0].name"] == ""
    got = _refused(app_client, **{"pools[0].servers": "", "pools[0].name": "default"})
    assert got.errors["pools[0].servers"] == "Field required"
    assert "implicit pool of the top-level tiers" in got.errors["pools[0].name"]
    before = _yaml_in_force(app_client)
    fields = {
        **_form(app_client).values,
        "pools[0].servers": "DB2PROD*\nDB2TEST*",
        "pools[0].tiers[0].capacity_gb": "500",
    }
    r = app_client.post("/policies/form", data=fields, follow_redirects=False)
    assert r.status_code == 303
    expected = copy.deepcopy(before)
    expected["pools"][0]["servers"] = ["DB2PROD*", "DB2TEST*"]
    expected["pools"][0]["tiers"][0]["capacity_gb"] = 500
    assert _yaml_in_force(app_client) == expected


def test_a_model_error_path_finds_its_field() -> None:
    """The model's error locations lead to the form's fields; inside a list, the line."""
    policy = parse_policy(DEFAULT_POLICY.read_text(encoding="utf-8"), source="default")
    form = form_of(DEFAULT, policy, base=0)
    edit = Edit(form, DEFAULT, {"tiers": ["0", "new", "1", "2"]}, [])
    slots, kinds = form.slots(), {f.name: f.spec.kind for f in form.fields()}
    assert _path(("tiers", 1, "capacity_gb"), edit.order) == "tiers[new].capacity_gb"
    assert _path(("tiers", 2, "capacity_gb"), edit.order) == "tiers[1].capacity_gb"
    at = _path(("tiers", 0, "locations", "sqlserver_path_prefixes", 1), edit.order)
    assert _place(at, slots, kinds) == ("tiers[0].locations.sqlserver_path_prefixes", "line 2")
    assert _place("tiers[0].transfer_mb_s", slots, kinds) == ("tiers[0]", "transfer_mb_s")
    assert _place("pins[0].forbid", slots, kinds) == ("", "pins[0].forbid")


def test_a_policy_of_many_pools_is_edited_in_one_form(app_client: TestClient) -> None:
    """Over a thousand fields (Starlette's default limit per form): still read, checked and saved."""
    data = copy.deepcopy(DEFAULT)
    data["pools"] = [{"name": f"array-{i}", "servers": [f"SRV{i:02d}"], "tiers": copy.deepcopy(DEFAULT["tiers"])}
                     for i in range(20)]  # fmt: skip
    token = csrf_of(login(app_client, "ada").get("/policies").text)
    assert (
        app_client.post(
            "/policies", data={"yaml_text": yaml.safe_dump(data), "csrf_token": token}
        ).status_code
        == 200
    )
    form = _form(app_client)
    assert len(form.values) > 1000
    bad = app_client.post(
        "/policies/validate", data={**form.values, "pools[17].tiers[2].device_iops": "0"}
    ).json()
    assert bad["errors"] == [
        {"field": "pools[17].tiers[2].device_iops", "message": "Input should be greater than 0"}
    ]
    r = app_client.post("/policies/form", data={**form.values, "pools[17].tiers[2].device_iops": "90"},
                        follow_redirects=False)  # fmt: skip
    assert r.status_code == 303
    data["pools"][17]["tiers"][2]["device_iops"] = 90
    assert _yaml_in_force(app_client) == data
