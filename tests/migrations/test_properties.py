"""Hostile names cannot break out of their quoting.

For any names — brackets, quotes, semicolons, `--`, `/*`, `GO`, `%s`, Unicode, 128 characters —
removing every quoted identifier, string literal and comment from a generated script leaves
exactly the skeleton of the same script generated for benign names. Names that a client tool
would read (line breaks, other controls, bidi controls, `$(`, DB2's `@`) are refused, with a
message naming the object, and never reach a script.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields, replace
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from migrations import AdviceError, Move, Options, TierSpot, render_pair, select_moves
from migrations.ilm import ilm_moves, month_pair
from tests.migrations.sqltokens import db2_skeleton, db2_tokens, tool_lines, tsql_skeleton, tsql_tokens

WHEN = __import__("datetime").datetime(2024, 5, 2, tzinfo=__import__("datetime").UTC)
OPTIONS = Options(generator="tierwise (property tests)")

FRAGMENTS = [
    "]",
    "[",
    "]]",
    "'",
    "''",
    '"',
    ";",
    "--",
    "/*",
    "*/",
    "%s",
    "%d",
    "%",
    "GO",
    "go",
    " ",
    "N'",
    "$",
    "(",
    ")",
    "\\",
    "é",
    "日本",
    "😀",
    "\u00a0",
    "\u200d",
    "ß",
    "Ω",
    "x",
    "A",
    "1",
    "_",
    "-",
    "#",
    ",",
    "{",
    "}",
    "`",
    "&",
    "<",
    ">",
    "̈",
    "ﬁ",
    "\u00ad",
    ".",  # schema.table: a name may contain the separator itself
    "].[",
    '"."',
]
UNSAFE = ["\n", "\r\n", "\nGO\n", "$(", "\t", "\x00", "\u2028", "\u202e", "\x85", "\u2066"]
SAFE_CHARS = st.characters(
    blacklist_categories=("Cc", "Cs", "Zl", "Zp"),
    blacklist_characters="\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff\ufffe\uffff$.@",
)


def names(*, dots: bool = True, at: bool = True) -> st.SearchStrategy[str]:
    frag = st.sampled_from([f for f in FRAGMENTS if (dots or "." not in f) and (at or "@" not in f)])
    return st.lists(frag | SAFE_CHARS, min_size=1, max_size=24).map("".join)


def code(text: str, dialect: str) -> str:
    """The script without its comments (comments show unsafe text escaped, or keep DB2's `@`)."""
    tokens = tsql_tokens(text) if dialect == "tsql" else db2_tokens(text)
    return "".join(t.text for t in tokens if t.kind != "comment")


def unsafe(s: str, dialect: str) -> bool:
    return any(u in s for u in UNSAFE) or (dialect == "db2" and "@" in s)


@dataclass(frozen=True)
class SqlNames:
    server: str = "SRV"
    db: str = "db"
    fg: str = "fg"
    file1: str = "f1"
    file2: str = "f2"
    primary: str = "pri"
    log: str = "lg"
    schema: str = "s"
    table: str = "t"
    scheme: str = "ps"
    function: str = "pf"
    stem: str = "stem"


def sqlserver_doc(n: SqlNames) -> dict[str, Any]:
    base = {
        "engine": "sqlserver",
        "server": n.server,
        "database": n.db,
        "profile": "cold",
        "rule": "TW401",
        "current_tier": "flash",
        "recommended_tier": "sata",
        "reasons": [f"because {n.fg} {n.table}"],
        "predicted": {"io_ms_per_s_now": 1.0, "io_ms_per_s_after": 2.0},
        "size_bytes": 1 << 30,
    }
    d = f"E:\\data\\{n.stem}"
    objs = [
        {
            **base,
            "kind": "filegroup",
            "name": n.fg,
            "key": f"{n.db}/filegroup/{n.fg}",
            "filegroup": n.fg,
            "files": [
                {"file_id": 3, "logical_name": n.file1, "physical_name": f"{d}_1.ndf", "size_bytes": 1 << 30},
                {"file_id": 4, "logical_name": n.file2, "physical_name": f"{d}_2.ndf", "size_bytes": 1 << 29},
            ],
        },
        {
            **base,
            "kind": "filegroup",
            "name": "PRIMARY",
            "key": f"{n.db}/filegroup/PRIMARY",
            "filegroup": "PRIMARY",
            "files": [
                {"file_id": 1, "logical_name": n.primary, "physical_name": f"{d}.mdf", "size_bytes": 1 << 30}
            ],
        },
        {
            **base,
            "kind": "log_file",
            "name": n.log,
            "key": f"{n.db}/file/2",
            "logical_name": n.log,
            "file_id": 2,
            "physical_name": f"{d}_log.ldf",
            "recommended_tier": "fc",
        },
        {
            **base,
            "database": "tempdb",
            "kind": "tempdb",
            "name": "tempdb",
            "key": "tempdb/data",
            "recommended_tier": "fc",
            "files": [
                {
                    "file_id": 1,
                    "logical_name": n.file1,
                    "physical_name": f"T:\\{n.stem}.mdf",
                    "size_bytes": 1 << 30,
                }
            ],
        },
        {
            **base,
            "kind": "partition",
            "name": f"{n.schema}.{n.table} p3",
            "key": f"{n.db}/partition/{n.schema}.{n.table}/1/3",
            "table_name": f"{n.schema}.{n.table}",
            # as `tierwise advise` writes them (from the collected schema_name): exact even when a
            # name contains "."
            "schema_name": n.schema,
            "schema": n.schema,
            "table": n.table,
            "partition_number": 3,
            "partition_scheme": n.scheme,
            "partition_function": n.function,
            "filegroup": n.fg,
            "range_low": "2024-01-01",
            "range_high": "2024-04-01",
        },
    ]
    for o in objs:
        o["placement_unit"] = o["key"]
    return {"objects": objs}


TIERS = [
    TierSpot("flash", "E:\\flash\\", "SG_FLASH", ("/db2/flash1",), 0.8, 350, 1),
    TierSpot("fc", "F:\\fc\\", "SG_FC", ("/db2/fc1",), 6.725, 100, None),
    TierSpot("sata", "S:\\sata\\", "SG_SATA", ("/db2/sata1",), 12, 70, 9),
]


def _scripts(
    doc: dict[str, Any], dialect: str, tiers: list[TierSpot] = TIERS
) -> tuple[list[tuple[str, str, str]], list[str]]:
    keys = [o["key"] for o in doc["objects"]]
    sel = select_moves(
        doc,
        source="advice.json",
        tiers=tiers,
        dialect=dialect,
        only=[f"{o['server']}|{o['key']}" for o in doc["objects"]],
        read_only=[f"{doc['objects'][0]['server']}|{keys[0]}"] if dialect == "tsql" else [],
    )  # type: ignore[arg-type]
    out = []

    def index(key: str) -> int:  # a database's offline moves are one move, keyed "k1 + k2"
        return keys.index(key.split(" + ")[0])

    moves: list[Move] = sorted(sel.moves, key=lambda m: (index(m.key), type(m.action).__name__))
    for m in moves:
        fwd, back = render_pair(m, dialect, OPTIONS, WHEN)  # type: ignore[arg-type]
        out.append((f"{index(m.key)}:{type(m.action).__name__}", fwd.text, back.text))
    return out, [s.reason for s in sel.skipped]


def _same_structure(
    hostile_out: list[tuple[str, str, str]], benign_out: list[tuple[str, str, str]], skeleton: Any
) -> None:
    assert [h[0] for h in hostile_out] == [b[0] for b in benign_out]
    for (label, hf, hb), (_, bf, bb) in zip(hostile_out, benign_out, strict=True):
        for h, b in ((hf, bf), (hb, bb)):
            assert skeleton(h) == skeleton(b), f"{label}: the skeleton changed with the names"
            assert tool_lines(h) == tool_lines(b), f"{label}: client-tool lines changed with the names"


def with_one_unsafe(n: Any) -> st.SearchStrategy[Any]:
    """Usually the names as they are; sometimes one of them with a character a tool acts on."""
    candidates = [f.name for f in fields(n) if f.name != "stem"]
    spoiled = st.tuples(st.sampled_from(candidates), st.sampled_from(UNSAFE), st.integers(0, 8)).map(
        lambda t: replace(n, **{t[0]: getattr(n, t[0])[: t[2]] + t[1] + getattr(n, t[0])[t[2] :]})
    )
    return st.one_of(st.just(n), st.just(n), spoiled)


sql_names = st.builds(
    SqlNames,
    server=names(),
    db=names(),
    fg=names(),
    file1=names(),
    file2=names(),
    primary=names(),
    log=names(),
    schema=names(),
    table=names(),
    scheme=names(),
    function=names(),
    stem=names(dots=False).map(lambda s: "".join(c for c in s if c not in '<>"|?*:/\\%')).filter(bool),
).flatmap(with_one_unsafe)

BENIGN_SQL, _ = _scripts(sqlserver_doc(SqlNames()), "tsql")


def _distinctive(value: str, benign: list[tuple[str, str, str]]) -> bool:
    """A refused name can only be looked for in the other moves' scripts when it is not text any
    script contains anyway (a name like "]\n" or "]]]\n" is part of bracket-quoted lines: a name
    `]` is written `[]]]`). It needs three characters other than quotes and white space."""
    own = [c for c in value if c not in "[]\"' \t\r\n"]
    return len(own) >= 3 and not any(value in f or value in b for _, f, b in benign)


def _refused(
    doc: dict[str, Any], dialect: str, tiers: list[TierSpot] = TIERS
) -> tuple[list[tuple[str, str, str]], list[str], str | None]:
    try:
        out, skipped = _scripts(doc, dialect, tiers)
    except AdviceError as exc:
        return [], [], str(exc)
    return out, skipped, None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sql_names)
def test_tsql_names_cannot_break_out(n: SqlNames) -> None:
    assume(n.file1.casefold() != n.file2.casefold() and n.fg.casefold() != "primary")
    values = [getattr(n, f.name) for f in fields(n)]
    must_refuse = any(unsafe(v, "tsql") for v in values) or any(
        len(v.encode("utf-16-le")) // 2 > 128 for v in values
    )
    out, skipped, error = _refused(sqlserver_doc(n), "tsql")
    if must_refuse:
        assert error or skipped, "an unsafe or over-long name was not refused"
        for reason in skipped:
            assert reason.startswith("unsupported here: review: advice.json: object ")
        for _, fwd, back in out:
            for v in values:
                # white space around a name is indistinguishable from the line it ends: look for
                # the part that makes it unsafe
                core = v.strip()
                if unsafe(core, "tsql") and _distinctive(core, BENIGN_SQL):
                    assert core not in fwd and core not in back  # not even in comments
        return
    assert error is None and not skipped, (error, skipped)
    _same_structure(out, BENIGN_SQL, tsql_skeleton)


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cc", "Cs", "Zl", "Zp"),
            max_codepoint=0xFFFF,
            blacklist_characters="$.\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff\ufffe\uffff",
        ),
        min_size=128,
        max_size=128,
    )
)
def test_tsql_names_of_maximum_length(name: str) -> None:
    n = SqlNames(
        db=name, fg=name[::-1] if name[::-1] != name else name + "", file1=name, table=name, scheme=name
    )
    if n.fg == n.db:
        n = replace(n, fg="fg")
    out, skipped = _scripts(sqlserver_doc(n), "tsql")
    assert not skipped, skipped
    _same_structure(out, BENIGN_SQL, tsql_skeleton)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(UNSAFE), st.sampled_from([f.name for f in fields(SqlNames) if f.name != "stem"]))
def test_tsql_unsafe_names_are_refused_naming_the_object(bad: str, field: str) -> None:
    n = replace(SqlNames(), **{field: f"x{bad}y"})
    out, skipped = _scripts(sqlserver_doc(n), "tsql")
    assert skipped, "an unsafe name reached a script"
    assert all("unsupported here: review" in r for r in skipped)
    assert any(repr(f"x{bad}y") in r for r in skipped), skipped
    for _, fwd, back in out:
        assert f"x{bad}y" not in fwd and f"x{bad}y" not in back


# ---------------------------------------------------------------------------------------------
# DB2


@dataclass(frozen=True)
class Db2Names:
    instance: str = "db2inst1"
    ts: str = "TS"
    ts2: str = "TS2"
    sg_from: str = "SG_A"
    sg_to: str = "SG_B"
    schema: str = "S"
    table: str = "T"
    ts3: str = "TS3"
    part1: str = "P1"
    part2: str = "P2"
    bound: str = "d2024-01-01"
    temp: str = "TEMP1"


def db2_doc(n: Db2Names) -> dict[str, Any]:
    base = {
        "engine": "db2",
        "server": f"host/{n.instance}",
        "database": "SALESDB",
        "profile": "cold",
        "rule": "TW401",
        "current_tier": "flash",
        "recommended_tier": "sata",
        "reasons": [f"x {n.ts}"],
        "predicted": {"io_ms_per_s_now": 1.0, "io_ms_per_s_after": 2.0},
        "size_bytes": 1 << 30,
        "storage_group": n.sg_from,
    }
    objs = [
        {**base, "kind": "tablespace", "name": n.ts, "key": f"SALESDB/tablespace/{n.ts}", "tablespace": n.ts},
        # a system temporary table space: recreated on the target group
        {
            **base,
            "kind": "tempdb",
            "name": n.temp,
            "key": f"SALESDB/tablespace/{n.temp}",
            "tablespace": n.temp,
        },
        # P1 and P2 share a table space: detach / copy / attach; P3 is alone: its table space moves
        {
            **base,
            "kind": "partition",
            "name": f"{n.schema}.{n.table} {n.part1}",
            "key": f"SALESDB/partition/{n.schema}.{n.table}/1",
            "tablespace": n.ts2,
            "table_name": f"{n.schema}.{n.table}",
            "schema": n.schema,
            "table": n.table,
            "partition_number": 1,
            "range_high": n.bound,
            "high_inclusive": False,
        },
        {
            **base,
            "kind": "partition",
            "name": f"{n.schema}.{n.table} {n.part2}",
            "key": f"SALESDB/partition/{n.schema}.{n.table}/2",
            "tablespace": n.ts2,
            "table_name": f"{n.schema}.{n.table}",
            "schema": n.schema,
            "table": n.table,
            "partition_number": 2,
            "range_low": n.bound,
            "low_inclusive": True,
        },
        {
            **base,
            "kind": "partition",
            "name": f"{n.schema}.{n.table} P3",
            "key": f"SALESDB/partition/{n.schema}.{n.table}/3",
            "tablespace": n.ts3,
            "table_name": f"{n.schema}.{n.table}",
            "schema": n.schema,
            "table": n.table,
            "partition_number": 3,
        },
    ]
    for o in objs:
        o["placement_unit"] = o["key"]
    return {"objects": objs}


def db2_tiers(n: Db2Names) -> list[TierSpot]:
    return [
        TIERS[0],
        TIERS[1],
        replace(TIERS[2], db2_storage_group=n.sg_to, db2_paths=("/db2/sata1", "/db2/sata 2")),
    ]


BENIGN_DB2, _ = _scripts(db2_doc(Db2Names()), "db2", db2_tiers(Db2Names()))

db2_names = st.builds(
    Db2Names,
    instance=names(),
    ts=names(),
    ts2=names(),
    sg_from=names(),
    sg_to=names(),
    schema=names(),
    table=names(),
    ts3=names(),
    part1=names(),
    part2=names(),
    bound=names().map(lambda s: "d" + s),
    temp=names(),
).flatmap(with_one_unsafe)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(db2_names)
def test_db2_names_cannot_break_out(n: Db2Names) -> None:
    assume(n.sg_from != n.sg_to and "/" not in n.instance)
    assume(len({n.ts, n.ts2, n.ts3, n.temp}) == 4 and n.part1 != n.part2)
    values = [getattr(n, f.name) for f in fields(n)]
    must_refuse = any(unsafe(v, "db2") for v in values) or any(len(v.encode()) > 128 for v in values)
    out, skipped, error = _refused(db2_doc(n), "db2", db2_tiers(n))
    if must_refuse:
        assert error or skipped, "an unsafe or over-long name was not refused"
        for _, fwd, back in out:
            for v in values:
                if unsafe(v, "db2") and _distinctive(v, BENIGN_DB2):
                    assert v not in code(fwd, "db2") and v not in code(back, "db2")
        return
    assert error is None and not skipped, (error, skipped)
    _same_structure(out, BENIGN_DB2, db2_skeleton)


def test_db2_terminator_in_a_name_is_refused() -> None:
    out, skipped = _scripts(db2_doc(Db2Names(ts="TS@X")), "db2", db2_tiers(Db2Names()))
    assert any("'TS@X'" in r and "terminator" in r for r in skipped)
    assert all("TS@X" not in code(f, "db2") and "TS@X" not in code(b, "db2") for _, f, b in out)


def test_db2_database_must_be_an_alias() -> None:
    doc = copy.deepcopy(db2_doc(Db2Names()))
    for o in doc["objects"]:
        o["database"] = "SALES DB"
    out, skipped = _scripts(doc, "db2", db2_tiers(Db2Names()))
    assert out == [] and skipped


# ---------------------------------------------------------------------------------------------
# ILM leading edge (tierwise ilm --scripts): AddPartition / AddDataPartition


@dataclass(frozen=True)
class IlmNames:
    server: str = "SRV"
    schema: str = "s"
    table: str = "t"
    scheme: str = "ps"
    function: str = "pf"
    fg: str = "fg"
    ts: str = "TS"
    sg: str = "SG_A"


def ilm_docs(n: IlmNames, engine: str) -> tuple[dict[str, Any], dict[str, Any]]:
    db, server = ("db", n.server) if engine == "sqlserver" else ("SALESDB", "host/db2inst1")
    obj: dict[str, Any] = {
        "engine": engine, "server": server, "database": db, "kind": "partition",
        "name": f"{n.schema}.{n.table} P1", "key": f"{db}/partition/{n.schema}.{n.table}/1", "current_tier": "flash",
        "recommended_tier": "flash", "placement_unit": "x", "table_name": f"{n.schema}.{n.table}", "schema": n.schema,
        "table": n.table, "partition_number": 1, "range_low": "2024-04-01", "range_high": "2024-07-01",
        "low_inclusive": True, "high_inclusive": False,
    }  # fmt: skip
    if engine == "sqlserver":
        obj.update(filegroup=n.fg, partition_scheme=n.scheme, partition_function=n.function, range_right=True)
    else:
        obj.update(tablespace=n.ts, storage_group=n.sg)
    new = {"partition": 2, "key": "new", "new": True, "range_start": "2024-07-01", "range_end": "2024-10-01",
           "moves": [{"date": "2024-06-01", "to_tier": "fc", "reason": "new"}]}  # fmt: skip
    table = {"engine": engine, "server": server, "database": db, "table": f"{n.schema}.{n.table}",
             "partitions": [{"partition": 1, "key": obj["key"], "new": False, "moves": []}, new]}  # fmt: skip
    return {"objects": [obj]}, {"tables": [table]}


def _ilm_scripts(n: IlmNames, dialect: str) -> tuple[list[tuple[str, str, str]], list[str]]:
    advice, plan = ilm_docs(n, "sqlserver" if dialect == "tsql" else "db2")
    sel = ilm_moves(advice, plan, source="p", tiers=TIERS, dialect=dialect)  # type: ignore[arg-type]
    out = []
    skipped = [s.reason for s in sel.skipped]
    for month in sel.months:
        fwd, back, moves, more = month_pair(month, dialect, OPTIONS, WHEN)  # type: ignore[arg-type]
        skipped += [s.reason for s in more]
        out += [(f"{month.month}:{type(m.action).__name__}", fwd.text, back.text) for m in moves]
    return out, skipped


BENIGN_ILM = {d: _ilm_scripts(IlmNames(), d)[0] for d in ("tsql", "db2")}
ilm_names = st.builds(
    IlmNames, server=names(), schema=names(), table=names(), scheme=names(), function=names(), fg=names(),
    ts=names(), sg=names(),
).flatmap(with_one_unsafe)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ilm_names, st.sampled_from(["tsql", "db2"]))
def test_ilm_leading_edge_names_cannot_break_out(n: IlmNames, dialect: str) -> None:
    assert BENIGN_ILM[dialect], "the benign ILM plan must script the leading edge"
    # the new DB2 partition goes to another tier: that tier's storage group, not the advice's `sg`
    used = (
        ["schema", "table", "scheme", "function", "fg", "server"]
        if dialect == "tsql"
        else ["schema", "table", "ts"]
    )
    values = [getattr(n, f) for f in used]
    limit = (lambda v: len(v.encode("utf-16-le")) // 2) if dialect == "tsql" else (lambda v: len(v.encode()))
    out, skipped = _ilm_scripts(n, dialect)
    if any(unsafe(v, dialect) for v in values) or any(limit(v) > 128 for v in values):
        assert skipped and not out, "an unsafe or over-long name was not refused"
        return
    assert not skipped, skipped
    skeleton = tsql_skeleton if dialect == "tsql" else db2_skeleton
    _same_structure(out, BENIGN_ILM[dialect], skeleton)


def test_schema_and_table_with_dots_and_quotes_are_quoted_whole() -> None:
    """The example the properties must cover: "." inside a schema and a table name, with "]" and
    '"' — never split at the wrong ".", never breaking out of the quoting."""
    schema, table = 'a.b]"', 'c."d]'
    out, skipped = _scripts(sqlserver_doc(SqlNames(schema=schema, table=table)), "tsql")
    assert not skipped
    _same_structure(out, BENIGN_SQL, tsql_skeleton)
    (part,) = [(f, b) for label, f, b in out if label.startswith("4:")]
    assert all('[a.b]]"].[c."d]]]' in text for text in part)
    out, skipped = _scripts(db2_doc(Db2Names(schema=schema, table=table)), "db2", db2_tiers(Db2Names()))
    assert not skipped
    _same_structure(out, BENIGN_DB2, db2_skeleton)
    assert any('"a.b]"""."c.""d]"' in f for _, f, _ in out)


def _ilm_read_only_scripts(n: IlmNames) -> tuple[list[tuple[str, str, str]], list[str]]:
    """The ILM plan of ilm_docs plus partition 1 going to sata read-only in December (SQL Server:
    the partition move and READ_ONLY on the filegroup it moved to, which lists the partition)."""
    advice, plan = ilm_docs(n, "sqlserver")
    plan["tables"][0]["partitions"][0]["moves"] = [
        {"date": "2024-12-01", "to_tier": "sata", "read_only": True, "reason": "old"}
    ]
    sel = ilm_moves(advice, plan, source="p", tiers=TIERS, dialect="tsql")
    out, skipped = [], [s.reason for s in sel.skipped]
    for month in sel.months:
        fwd, back, moves, more = month_pair(month, "tsql", OPTIONS, WHEN)
        skipped += [s.reason for s in more]
        out += [(f"{month.month}:{type(m.action).__name__}", fwd.text, back.text) for m in moves]
    return out, skipped


BENIGN_ILM_READ_ONLY = _ilm_read_only_scripts(IlmNames())[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ilm_names)
def test_ilm_read_only_names_cannot_break_out(n: IlmNames) -> None:
    assert [label for label, _, _ in BENIGN_ILM_READ_ONLY if label.startswith("2024-12")] == [
        "2024-12:MovePartition",
        "2024-12:SetReadOnly",
    ]
    values = [n.schema, n.table, n.scheme, n.function, n.fg, n.server]
    if any(unsafe(v, "tsql") for v in values) or any(len(v.encode("utf-16-le")) // 2 > 128 for v in values):
        out, skipped = _ilm_read_only_scripts(n)
        assert skipped, "an unsafe or over-long name was not refused"
        assert not any(label.endswith("SetReadOnly") for label, _, _ in out)
        return
    out, skipped = _ilm_read_only_scripts(n)
    assert not skipped, skipped
    _same_structure(out, BENIGN_ILM_READ_ONLY, tsql_skeleton)
