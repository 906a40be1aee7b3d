"""The advice document's decision is typed (advisors.document.DecisionDoc), stored and printed
byte for byte as advisors.explain.Decision.as_json writes it, and stored rows read back (#18)."""

from __future__ import annotations

import json

import pytest

from advisors.advise import advise
from advisors.document import AdvisedObject, DecisionDoc
from advisors.explain import STAGES
from app.advice import advised_object, windows_from_snapshots
from tests.advisors.test_scenarios import policy_of, snapshots_of
from tests.app.test_advice_document import DB2_PARTITION, FILEGROUP_WITH_FILES, SQLSERVER_PARTITION


def test_a_stored_decision_reads_typed() -> None:
    d = AdvisedObject.model_validate(json.loads(FILEGROUP_WITH_FILES)).decision
    assert isinstance(d, DecisionDoc)
    assert (d.stage, d.rule, d.moved, d.preferred_tier, d.unit) == ("price", "TW710", False, "fc", None)
    assert d.allowed_tiers == ["flash", "fc", "sata"]
    assert [(p.tier, p.measured) for p in d.predicted] == [("flash", False), ("fc", True), ("sata", False)]
    assert d.numbers["io_ms_per_s_saved"] == 0.0 and d.numbers["read_miss_ratio"] is None
    member = AdvisedObject.model_validate(json.loads(DB2_PARTITION)).decision
    assert member is not None and member.stage == "moves_with_unit"
    assert member.unit == "SALESDB/tablespace/TS_ORDERS_2023" and member.predicted == []
    not_placed = AdvisedObject.model_validate(json.loads(SQLSERVER_PARTITION)).decision
    assert not_placed is not None and not_placed.numbers == {} and not_placed.current_tier is None


def test_numbers_keep_their_order_and_integers() -> None:
    row = json.loads(FILEGROUP_WITH_FILES)
    row["decision"]["numbers"] = {"z_last_written_first": 3, "backend_iops": 70.0, "a": None}
    doc = AdvisedObject.model_validate(row)
    assert doc.decision is not None
    assert list(doc.decision.numbers) == ["z_last_written_first", "backend_iops", "a"]
    assert (
        json.dumps(doc.as_json()["decision"]["numbers"])
        == '{"z_last_written_first": 3, "backend_iops": 70.0, "a": null}'
    )


def test_a_decision_without_its_stage_is_not_a_decision() -> None:
    row = json.loads(FILEGROUP_WITH_FILES)
    del row["decision"]["stage"]
    with pytest.raises(ValueError, match=r"decision\.stage"):
        AdvisedObject.model_validate(row)


@pytest.mark.parametrize("scenario", ["month-end-rereads", "mixed-fleet"])
def test_every_advised_object_carries_a_typed_decision(scenario: str) -> None:
    policy, snaps = policy_of(scenario), snapshots_of(scenario)
    report = advise(windows_from_snapshots(snaps, policy), policy, now=max(s.sample_time for s in snaps))
    docs = [advised_object(a) for a in report.objects]
    assert docs
    for doc, a in zip(docs, report.objects, strict=True):
        assert isinstance(doc.decision, DecisionDoc) and doc.decision.stage in STAGES
        assert a.decision is not None  # the writer's JSON, unchanged, keys in order:
        assert json.dumps(doc.as_json()["decision"]) == json.dumps(a.decision.as_json())
