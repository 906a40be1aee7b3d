"""The Policy page's form: the pools and tiers of the policy in force as fields, and a submission
applied back onto the policy document.

The form edits the figures an admin changes most (a tier's capacity, devices, latencies, write
budget, cost and locations; a pool's servers). It never judges a value itself: the submission is
applied to a copy of the current document, which `policies.model.Policy` validates, and each of the
model's errors is placed next to the field its path names. Every key the form does not show is
kept as it is in the document, so the YAML view stays the place for everything else.

A field's form name is its path in the policy document (`pools[0].tiers[1].capacity_gb`), so the
model's error paths lead back to it. A tier's index in the name is its index in the document the
form was drawn from; a tier added on the form is `tiers[new]`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from policies.model import RAID_FACTORS, Policy, Tier

Kind = Literal["text", "number", "raid", "lines", "band"]
NEW = "new"  # the row key of a tier added on the form
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Spec:
    """One field of a tier or pool: its key in the document (dotted when nested) and how it reads."""

    key: str
    label: str
    kind: Kind
    unit: str = ""
    help: str = ""
    choices: tuple[tuple[str, str], ...] = ()  # a select's (value, label) pairs


def _described(key: str) -> str:
    """The model's own description of a tier's field (one wording for the concept)."""
    return Tier.model_fields[key].description or ""


RAID_CHOICES: tuple[tuple[str, str], ...] = tuple(
    (str(level), f"RAID {level} (a write costs {factor} I/O{'s' if factor > 1 else ''})")
    for level, factor in sorted(RAID_FACTORS.items())
)

TIER_FIELDS: tuple[Spec, ...] = (
    Spec("name", "Name", "text", help="used in the advice and the scripts; pins and ILM rules name it too"),
    Spec("description", "Description", "text"),
    Spec("capacity_gb", "Usable capacity", "number", "GB", _described("capacity_gb")),
    Spec("devices", "Devices", "number", help="drives (or LUNs) in the tier"),
    Spec("device_iops", "IOPS per device", "number", "IOPS", _described("device_iops")),
    Spec("raid_level", "RAID level", "raid", help="a host write costs the back end the RAID factor in I/Os",
         choices=RAID_CHOICES),
    Spec("read_latency_ms", "Read latency", "number", "ms", _described("read_latency_ms")),
    Spec("write_latency_ms", "Write latency", "number", "ms", "service time of a write (the array's write cache)"),
    Spec("read_latency_band_ms", "Normal read latency", "band", "ms", _described("read_latency_band_ms")),
    Spec("write_latency_band_ms", "Normal write latency", "band", "ms", "expected average write latency (low, high)"),
    Spec("endurance_dwpd", "Write budget", "number", "DWPD",
         "rated drive writes per day of the tier's drives (flash); blank: not limited"),
    Spec("cost_per_gb", "Cost per GB", "number", help="what a GB on the tier costs; weighed against I/O wait"),
    Spec("locations.sqlserver_path_prefixes", "SQL Server path prefixes", "lines",
         help="one per line: files under these paths are on this tier"),
    Spec("locations.db2_storage_groups", "DB2 storage groups", "lines",
         help="one per line: table spaces in these storage groups are on this tier"),
    Spec("locations.db2_path_prefixes", "DB2 path prefixes", "lines",
         help="one per line: DB2 logs and SMS table spaces under these paths are on this tier"),
)  # fmt: skip

POOL_FIELDS: tuple[Spec, ...] = (
    Spec("name", "Name", "text"),
    Spec("description", "Description", "text"),
    Spec("servers", "Servers", "lines", help="one per line: names or patterns such as SQLPROD0*"),
    Spec("sqlserver_path_prefixes", "Only SQL Server paths under", "lines",
         help="optional, one per line: the pool takes only these paths of its servers"),
    Spec("db2_storage_groups", "Only DB2 storage groups", "lines",
         help="optional, one per line: the pool takes only these storage groups of its servers"),
)  # fmt: skip

BAND_PARTS = ("low", "high")


# ---- values: document <-> text ----------------------------------------------------------------


def _number_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return str(v)


def _number(text: str) -> Any:
    """A number typed in a field: an int or float when it reads as one, else the text itself (the
    model refuses it with its own message)."""
    t = text.strip()
    if not _NUMBER.match(t):
        return t
    return int(t) if re.fullmatch(r"[+-]?\d+", t) else float(t)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def render_value(kind: Kind, v: Any) -> str | tuple[str, str]:
    """How a document value shows in its field."""
    if kind == "band":
        if isinstance(v, list | tuple) and len(v) == 2:
            return (_number_text(v[0]), _number_text(v[1]))
        return ("", "")
    if kind == "lines":
        if v is None:
            return ""
        return "\n".join(str(x) for x in v) if isinstance(v, list | tuple) else str(v)
    if kind in ("number", "raid"):
        return _number_text(v)
    return "" if v is None else str(v)


_ABSENT = object()  # the field's key is to be left out of the document


def parse_value(kind: Kind, text: str | tuple[str, str]) -> Any:
    """The document value of a field's text (`_ABSENT`: blank, the key is left out)."""
    if kind == "band":
        low, high = text if isinstance(text, tuple) else ("", "")
        if not low.strip() and not high.strip():
            return _ABSENT
        return [_number(low), _number(high)]
    assert isinstance(text, str)
    if kind == "lines":
        return _lines(text) or _ABSENT
    if not text.strip():
        return _ABSENT
    return _number(text) if kind in ("number", "raid") else text.strip()


# ---- the form as the page shows it ---------------------------------------------------------------


def field_id(name: str) -> str:
    return "f-" + re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


@dataclass
class FieldView:
    """One field: `name` is its path in the policy; `value` is text (a (low, high) pair for a band)."""

    name: str
    spec: Spec
    value: str | tuple[str, str]
    errors: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return field_id(self.name)

    @property
    def part_names(self) -> tuple[str, str]:
        """A band's two inputs."""
        return (f"{self.name}[0]", f"{self.name}[1]")


@dataclass
class TierRow:
    key: str  # the tier's index in the document, or NEW
    prefix: str  # tiers[0], pools[1].tiers[2], tiers[new]
    title: str
    fields: list[FieldView]
    removed: bool = False
    position: str = ""  # NEW only: the key of the row it goes before ("" = last)
    tier: Tier | None = None  # the tier as saved, for what follows from its figures (IOPS, write budget)
    errors: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return field_id(self.prefix)


@dataclass
class PoolBlock:
    """A listed pool, or (index None) the top-level tiers: the default pool."""

    index: int | None
    prefix: str  # pools[0], or "" for the top level
    title: str
    fields: list[FieldView]
    tiers_path: str  # tiers, pools[0].tiers
    tiers: list[TierRow]
    new_tier: TierRow
    errors: list[str] = field(default_factory=list)  # the pool's own (e.g. duplicate tier names)
    tier_errors: list[str] = field(default_factory=list)  # its tier list's (e.g. every tier removed)

    @property
    def id(self) -> str:
        return field_id(self.prefix or "default-pool")

    @property
    def tiers_id(self) -> str:
        return field_id(self.tiers_path)


@dataclass
class PolicyForm:
    base: int  # the stored version the form was drawn from (0: the file)
    pools: list[PoolBlock]
    errors: list[str] = field(default_factory=list)  # the policy's own, not one field's
    refused: int = 0  # problems of a refused save

    @property
    def has_pools(self) -> bool:
        return any(p.index is not None for p in self.pools)

    def fields(self) -> list[FieldView]:
        """Every field of the form, the pools' and the tiers' (added tiers included)."""
        out: list[FieldView] = []
        for p in self.pools:
            out += p.fields
            for row in [*p.tiers, p.new_tier]:
                out += row.fields
        return out

    def slots(self) -> dict[str, list[str]]:
        """Every place an error can be shown, by its path ("" = the whole policy)."""
        out: dict[str, list[str]] = {"": self.errors}
        for p in self.pools:
            if p.prefix:
                out[p.prefix] = p.errors
            out[p.tiers_path] = p.tier_errors
            for f in p.fields:
                out[f.name] = f.errors
            for row in [*p.tiers, p.new_tier]:
                out[row.prefix] = row.errors
                for f in row.fields:
                    out[f.name] = f.errors
        return out

    def name_fields(self, under: str) -> list[FieldView]:
        """The name fields of the pools and tiers under a path (the candidates a model-level error
        such as "tier names must be unique" may be about)."""
        return [f for f in self.fields() if f.spec.key == "name" and _under(f.name, under)]


def _under(name: str, prefix: str) -> bool:
    return not prefix or name.startswith(prefix + ".") or name.startswith(prefix + "[")


def _get(d: Mapping[str, Any], dotted: str) -> Any:
    node: Any = d
    for part in dotted.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _fields(specs: tuple[Spec, ...], prefix: str, source: Mapping[str, Any]) -> list[FieldView]:
    return [FieldView(f"{prefix}.{s.key}", s, render_value(s.kind, _get(source, s.key))) for s in specs]


def _tier_rows(tiers: list[Any], path: str, parsed: list[Tier] | None) -> tuple[list[TierRow], TierRow]:
    rows = []
    for i, t in enumerate(tiers):
        prefix = f"{path}[{i}]"
        saved = parsed[i] if parsed is not None and i < len(parsed) else None
        rows.append(
            TierRow(str(i), prefix, str(t.get("name", "")), _fields(TIER_FIELDS, prefix, t), tier=saved)
        )
    prefix = f"{path}[{NEW}]"
    return rows, TierRow(NEW, prefix, "new tier", _fields(TIER_FIELDS, prefix, {}))


def form_of(doc: Mapping[str, Any], policy: Policy, *, base: int) -> PolicyForm:
    """The form of a valid policy document (`policy` is that document, validated)."""
    pools: list[PoolBlock] = []
    for i, p in enumerate(doc.get("pools") or []):
        prefix = f"pools[{i}]"
        rows, new = _tier_rows(list(p.get("tiers") or []), f"{prefix}.tiers", list(policy.pools[i].tiers))
        pools.append(PoolBlock(i, prefix, f"Pool {p.get('name', '')}", _fields(POOL_FIELDS, prefix, p),
                               f"{prefix}.tiers", rows, new))  # fmt: skip
    rows, new = _tier_rows(list(doc.get("tiers") or []), "tiers", list(policy.tiers))
    title = "Default pool: servers in no pool above" if pools else "Tiers"
    pools.append(PoolBlock(None, "", title, [], "tiers", rows, new))
    return PolicyForm(base, pools)


# ---- a submission applied to the document ------------------------------------------------------


@dataclass
class Edit:
    """A submission read against the document it was drawn from."""

    form: PolicyForm  # the submitted values, to show again
    data: dict[str, Any]  # the document with the submission applied
    order: dict[str, list[str]]  # tier list path -> the row keys, in the new document's order
    changes: list[str]  # what differs from the document, in words (for the audit log)


def _put(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = target
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            if value is _ABSENT:
                return
            child = {}
        else:
            child = dict(child)
        node[part] = child
        node = child
    if value is _ABSENT:
        node.pop(last, None)
    else:
        node[last] = value


def _show(v: Any) -> str:
    if v is _ABSENT or v is None:
        return "(none)"
    if isinstance(v, list):
        return "[" + ", ".join(_number_text(x) if not isinstance(x, str) else x for x in v) + "]"
    return _number_text(v) if not isinstance(v, str) else repr(v)


def _apply(
    specs: tuple[Spec, ...], view: list[FieldView], target: dict[str, Any], submitted: Callable[[str], str | None],
    changes: list[str], *, new: bool = False,
) -> bool:  # fmt: skip
    """Read each field's submitted text into `view` and, where it differs from the document, into
    `target`. True when any field was filled in (for a new tier)."""
    filled = False
    for f in view:
        if f.spec.kind == "band":
            low, high = (submitted(n) for n in f.part_names)
            text: str | tuple[str, str] | None = (
                None if low is None and high is None else (low or "", high or "")
            )
        else:
            text = submitted(f.name)
        if text is None:  # not sent: left as it is
            continue
        f.value = text
        value = parse_value(f.spec.kind, text)
        filled = filled or value is not _ABSENT
        before = _get(target, f.spec.key)
        if not new and value == parse_value(f.spec.kind, render_value(f.spec.kind, before)):
            continue  # unchanged: the document keeps its own spelling of it
        _put(target, f.spec.key, value)
        if not new:
            changes.append(f"{f.name}: {_show(before)} → {_show(value)}")
    return filled


def read_submission(doc: Mapping[str, Any], policy: Policy, submitted: Callable[[str], str | None],
                    *, base: int) -> Edit:  # fmt: skip
    """The submission applied to a copy of `doc` (the document the form was drawn from)."""
    form = form_of(doc, policy, base=base)
    data: dict[str, Any] = copy.deepcopy(dict(doc))
    order: dict[str, list[str]] = {}
    changes: list[str] = []
    for block in form.pools:
        container: dict[str, Any] = data if block.index is None else data["pools"][block.index]
        if block.index is not None:
            pool = dict(container)
            _apply(POOL_FIELDS, block.fields, pool, submitted, changes)
            data["pools"][block.index] = container = pool
        kept: list[tuple[str, dict[str, Any]]] = []
        for row, tier in zip(block.tiers, container.get("tiers") or [], strict=True):
            edited = dict(tier)
            _apply(TIER_FIELDS, row.fields, edited, submitted, changes)
            row.tier = None  # the figures shown are the submitted ones
            if submitted(f"{row.prefix}.remove"):
                row.removed = True
                changes.append(f"{row.prefix}: tier {row.title} removed")
                continue
            kept.append((row.key, edited))
        new = block.new_tier
        added: dict[str, Any] = {}
        new.position = submitted(f"{new.prefix}.position") or ""
        if _apply(TIER_FIELDS, new.fields, added, submitted, changes, new=True):
            at = next((i for i, (key, _) in enumerate(kept) if new.position and int(key) >= _index(new.position)),
                      len(kept))  # fmt: skip
            kept.insert(at, (NEW, added))
            changes.append(f"{new.prefix}: tier {added.get('name', '(unnamed)')} added")
        container["tiers"] = [t for _, t in kept]
        order[block.tiers_path] = [key for key, _ in kept]
    return Edit(form, data, order, changes)


def _index(position: str) -> int:
    try:
        return int(position)
    except ValueError:
        return 1 << 30  # not a row: last


# ---- the model's verdict, placed on the form ----------------------------------------------------


@dataclass(frozen=True)
class Problem:
    field: str  # the slot's path ("" = the whole policy)
    message: str


def _path(loc: tuple[int | str, ...], order: Mapping[str, list[str]]) -> str:
    """A model error's location as a form path: list indexes of edited tier lists become row keys."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            keys = order.get(out)
            out += f"[{keys[part] if keys is not None and 0 <= part < len(keys) else part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_LAST = re.compile(r"(\[[^\]]*\]|\.[^.\[]+|^[^.\[]+)$")


def _place(path: str, slots: Mapping[str, Any], kinds: Mapping[str, Kind]) -> tuple[str, str]:
    """The slot for an error at `path` (the nearest enclosing field, tier, pool or the whole
    policy) and what to say before the message when the slot is not the path itself."""
    dropped: list[str] = []
    rest = path
    while rest and rest not in slots:
        m = _LAST.search(rest)
        if m is None:
            rest = ""
            break
        dropped.insert(0, m.group(1))
        rest = rest[: m.start()]
    if not dropped:
        return rest, ""
    first = dropped[0]
    kind = kinds.get(rest)
    if first.startswith("[") and kind in ("lines", "band"):
        i = _index(first[1:-1])
        where = f"line {i + 1}" if kind == "lines" else BAND_PARTS[i] if i < 2 else first
        return rest, where
    return rest, "".join(dropped).lstrip(".")


def _message(msg: str) -> str:
    return msg.removeprefix("Value error, ")


def model_problems(edit: Edit) -> tuple[list[Problem], Policy | None]:
    """What the model says of the edited document, each problem at its slot."""
    try:
        return [], Policy.model_validate(edit.data)
    except ValidationError as exc:
        errors = exc.errors()
    slots = edit.form.slots()
    kinds = {f.name: f.spec.kind for f in edit.form.fields()}
    out = []
    for e in errors:
        slot, where = _place(_path(tuple(e["loc"]), edit.order), slots, kinds)
        text = _message(str(e["msg"]))
        out.append(Problem(slot, f"{where}: {text}" if where else text))
    return out, None


def blame(problems: list[Problem], edit: Edit, reread: Callable[[str, str], Edit]) -> list[Problem]:
    """A model-level problem (a pool's, the policy's) goes next to the name fields it is about:
    the names whose change alone makes the model drop it ("tier names must be unique: flash" goes
    next to both tiers called flash). The model decides, by validating the edit with that one name
    replaced; `reread(field, text)` reads the submission again with one field's text replaced."""
    out: list[Problem] = []
    field_slots = {f.name for f in edit.form.fields()}
    for p in problems:
        if p.field in field_slots:
            out.append(p)
            continue
        blamed = []
        for i, f in enumerate(edit.form.name_fields(p.field)):
            if isinstance(f.value, str) and f.value.strip():
                probe, name = f"Renamed{i}x", f.value.strip()
                again, _ = model_problems(reread(f.name, probe))
                # a message may list the names: read it with the name as it was
                if p not in [Problem(a.field, a.message.replace(probe, name)) for a in again]:
                    blamed.append(Problem(f.name, p.message))
        out += blamed or [p]
    return out


def attach(form: PolicyForm, problems: list[Problem]) -> None:
    form.refused = len(problems)
    slots = form.slots()
    for p in problems:
        slots.get(p.field, form.errors).append(p.message)


def check(doc: Mapping[str, Any], policy: Policy, submitted: Callable[[str], str | None],
          *, base: int) -> tuple[Edit, list[Problem], Policy | None]:  # fmt: skip
    """The submission applied to `doc` (the valid document `policy` was read from), the model's
    problems with it placed on the form, and the edited policy when it has none."""
    edit = read_submission(doc, policy, submitted, base=base)

    def reread(name: str, text: str) -> Edit:
        return read_submission(doc, policy, lambda n: text if n == name else submitted(n), base=base)

    problems, valid = model_problems(edit)
    return (edit, blame(problems, edit, reread), None) if problems else (edit, [], valid)


def dump(data: Mapping[str, Any], *, username: str, now: datetime) -> str:
    """The document as YAML (written anew: the comments of the earlier version are not kept)."""
    head = f"# saved by {username} from the policy form, {now:%Y-%m-%d %H:%M} UTC\n"
    return head + yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=110)
