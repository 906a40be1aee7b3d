"""Reading the advice JSON (or its typed objects, advisors.document.AdvisedObject): typed access
to each object's fields, with errors that name the source file and the object (`AdviceError`),
and name/path checks that turn unsafe names into `Unsupported` notes (quoting.check_name)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from advisors.document import AdvisedObject
from migrations.plan import PlanError, Unsupported
from migrations.quoting import UnsafeNameError, check_name, check_path

Dialect = Literal["tsql", "db2"]
ENGINE = {"tsql": "sqlserver", "db2": "db2"}


class AdviceError(PlanError):
    """The advice cannot be read as a plan; the message names the file and the object."""


def read_advised(raw: object, source: str) -> AdvisedObject:
    """One stored advice object (e.g. a recommendation's evidence) as the typed document, or an
    AdviceError naming `source` and the first field that does not fit."""
    try:
        return AdvisedObject.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the object"
        raise AdviceError(f"{source}: not an advised object: {where}: {first['msg']}") from exc


@dataclass(frozen=True, slots=True)
class TierSpot:
    """What the scripts need to know about a tier (from the policy's `locations`)."""

    name: str
    sqlserver_directory: str | None = None
    db2_storage_group: str | None = None
    db2_paths: tuple[str, ...] = ()
    db2_overhead_ms: float | None = None
    db2_device_read_rate_mb_s: float | None = None
    db2_data_tag: int | None = None
    # where a DB2 active log on this tier goes (policy locations.db2_log_path, or
    # tierwise script --db2-log-path)
    db2_log_path: str | None = None


@dataclass(frozen=True, slots=True)
class Obj:
    index: int
    raw: Mapping[str, Any]
    engine: str
    server: str
    database: str
    kind: str
    name: str
    key: str
    current_tier: str | None
    recommended_tier: str
    placement_unit: str

    @property
    def uid(self) -> str:
        return f"{self.server}|{self.key}"


class Reader:
    def __init__(self, source: str, tiers: Sequence[TierSpot], dialect: Dialect) -> None:
        self.source = source
        self.tiers = {t.name: t for t in tiers}
        self.order = [t.name for t in tiers]
        self.dialect = dialect

    def where(self, i: int, raw: Mapping[str, Any]) -> str:
        key = raw.get("key")
        server = raw.get("server")
        label = f" ({server}|{key})" if isinstance(key, str) and isinstance(server, str) else ""
        return f"{self.source}: object {i}{label}"

    def text(self, where: str, raw: Mapping[str, Any], field: str, *, optional: bool = False) -> str | None:
        value = raw.get(field)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            got = "nothing" if field not in raw else repr(value)
            raise AdviceError(f"{where}: {field} must be a non-empty string, got {got}")
        return value

    def req(self, where: str, raw: Mapping[str, Any], field: str) -> str:
        value = self.text(where, raw, field)
        assert value is not None
        return value

    def integer(
        self, where: str, raw: Mapping[str, Any], field: str, *, optional: bool = False
    ) -> int | None:
        value = raw.get(field)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            got = "nothing" if field not in raw else repr(value)
            raise AdviceError(f"{where}: {field} must be a whole number >= 0, got {got}")
        return value

    def tier(self, where: str, value: object, field: str) -> str:
        if not isinstance(value, str) or value not in self.tiers:
            raise AdviceError(
                f"{where}: {field} {value!r} is not a tier of the policy ({', '.join(self.order)})"
            )
        return value

    def name(self, where: str, value: str, what: str) -> str:
        try:
            return check_name(value, f"{where}: {what}", self.dialect)
        except UnsafeNameError as exc:
            raise Unsupported(str(exc)) from exc

    def path(self, where: str, value: str, what: str, *, directory: bool = False) -> str:
        try:
            return check_path(value, f"{where}: {what}", self.dialect, directory=directory)
        except UnsafeNameError as exc:
            raise Unsupported(str(exc)) from exc

    def obj(self, i: int, raw: object) -> Obj:
        """Object `i` of the advice, checked: a JSON object, or a typed AdvisedObject (read as the
        JSON it stores, so both go through the same checks and name the same fields)."""
        if isinstance(raw, AdvisedObject):
            raw = raw.as_json()
        if not isinstance(raw, dict):
            raise AdviceError(f"{self.source}: object {i}: expected a JSON object, got {type(raw).__name__}")
        where = self.where(i, raw)
        engine = self.req(where, raw, "engine")
        if engine not in ("sqlserver", "db2"):
            raise AdviceError(f"{where}: engine must be sqlserver or db2, got {engine!r}")
        current = raw.get("current_tier")
        return Obj(
            index=i,
            raw=raw,
            engine=engine,
            server=self.req(where, raw, "server"),
            database=self.req(where, raw, "database"),
            kind=self.req(where, raw, "kind"),
            name=self.req(where, raw, "name"),
            key=self.req(where, raw, "key"),
            current_tier=None if current is None else self.tier(where, current, "current_tier"),
            recommended_tier=self.tier(where, raw.get("recommended_tier"), "recommended_tier"),
            placement_unit=self.req(where, raw, "placement_unit"),
        )
