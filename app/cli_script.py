"""`tierwise script`: forward and rollback scripts for the recommended moves in an advice file.

`register(app)` adds the command to a typer application. It reads the JSON printed by
`tierwise advise`, writes one forward and one rollback script per move plus `plan.json` (run
order, sha256 of each file) into an empty or new directory, and prints the paths. Bad input is a
message on stderr naming the file and the object, exit code 2, and nothing written.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import typer

from app.cli_runtime import fail as _fail
from migrations import (
    EXTENSION,
    AdviceError,
    Dialect,
    Move,
    Options,
    PlanError,
    Script,
    Skipped,
    TierSpot,
    Unsupported,
    render_pair,
    select_moves,
)
from migrations.header import GENERATOR_REVISION, timestamp
from migrations.quoting import file_stem


def _generator() -> str:
    try:
        return f"tierwise {version('tierwise')}"
    except PackageNotFoundError:
        return "tierwise"


def tier_spots(policy: Any) -> list[TierSpot]:
    """The policy's tiers as the script generators see them (fastest first)."""
    spots = []
    for t in policy.tiers:
        loc = t.locations
        spots.append(
            TierSpot(
                name=t.name,
                sqlserver_directory=loc.sqlserver_directory,
                db2_storage_group=loc.db2_storage_group,
                db2_paths=tuple(loc.db2_paths),
                db2_overhead_ms=loc.db2_overhead_ms,
                db2_device_read_rate_mb_s=loc.db2_device_read_rate_mb_s,
                db2_data_tag=loc.db2_data_tag,
                db2_log_path=loc.db2_log_path,
            )
        )
    return spots


def read_advice(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AdviceError(f"{path}: cannot read the file: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AdviceError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc


def file_name(order: int, move: Move, direction: str, dialect: str) -> str:
    uid = hashlib.sha256(f"{move.target.server}|{move.key}".encode()).hexdigest()[:6]
    stem = file_stem(move.target.server, move.target.database, move.kind, move.name, limit=70)
    return f"{order:02d}-{stem}-{uid}.{direction}{EXTENSION[dialect]}"


def build(
    moves: tuple[Move, ...], dialect: Dialect, options: Options, now: datetime
) -> tuple[list[tuple[Move, Script, Script]], list[Skipped]]:
    pairs: list[tuple[Move, Script, Script]] = []
    skipped: list[Skipped] = []
    for move in moves:
        try:
            forward, rollback = render_pair(move, dialect, options, now)
        except Unsupported as exc:
            skipped.append(Skipped(move.target.server, move.key, f"unsupported here: review: {exc}"))
            continue
        pairs.append((move, forward, rollback))
    return pairs, skipped


def _entry(
    order: int, move: Move, forward: Script, rollback: Script, dialect: str
) -> tuple[dict[str, Any], dict[str, bytes]]:
    files: dict[str, bytes] = {}
    entry: dict[str, Any] = {
        "order": order,
        "server": move.target.server,
        "database": move.target.database,
        "key": move.key,
        "kind": move.kind,
        "name": move.name,
        "from_tier": move.from_tier,
        "to_tier": move.to_tier,
        "action": type(move.action).__name__
        + (f"/{getattr(move.action, 'mode', '')}" if hasattr(move.action, "mode") else ""),
        "plan_sha256": move.checksum(),
        "manual_step": forward.manual_step,
        "restart_required": forward.restart_required,
        "notes": list(forward.notes),
    }
    for script in (forward, rollback):
        name = file_name(order, move, script.direction, dialect)
        data = script.text.encode("utf-8")
        files[name] = data
        entry[script.direction] = {"path": name, "sha256": hashlib.sha256(data).hexdigest()}
    return entry, files


def script_command(
    advice: Path = typer.Option(..., "--advice", help="the JSON printed by `tierwise advise`"),
    dialect: str = typer.Option(..., "--dialect", help="tsql (SQL Server) or db2"),
    out: Path = typer.Option(..., "--out", help="directory for the scripts and plan.json (new or empty)"),
    policy_file: Path = typer.Option(
        None, "--policy", help="policy YAML with the tiers' locations (default: the shipped policy)"
    ),
    only: list[str] = typer.Option(
        None,
        "--only",
        help="script only this object: its advice `key` (on every server) or SERVER|KEY; repeatable "
        "(`--only A B` works). A partition key moves that one partition alone.",
    ),
    more_only: list[str] = typer.Argument(None, hidden=True),
    read_only: list[str] = typer.Option(
        None,
        "--read-only",
        help="SQL Server: also mark this filegroup key READ_ONLY (after its move); repeatable",
    ),
    backup_max_age_hours: float = typer.Option(
        24.0, "--backup-max-age-hours", help="newest full backup may be this old"
    ),
    backup_check: str = typer.Option(
        "error", "--backup-check", help="error (stop) or warn when there is no recent full backup"
    ),
    db2_log_path: list[str] = typer.Option(
        None,
        "--db2-log-path",
        help="DB2: TIER=PATH, where an active log moved to that tier goes (NEWLOGPATH); overrides the "
        "policy's locations.db2_log_path; repeatable",
    ),
) -> None:
    """Write forward and rollback scripts for the recommended moves, and plan.json with their run order."""
    from policies.loader import PolicyError, load_policy

    if dialect not in ("tsql", "db2"):
        _fail(f"--dialect must be tsql or db2, got {dialect!r}")
    if backup_check not in ("error", "warn"):
        _fail(f"--backup-check must be error or warn, got {backup_check!r}")
    if not backup_max_age_hours > 0:
        _fail("--backup-max-age-hours must be > 0")
    if more_only and not only:
        _fail(f"unexpected argument {more_only[0]!r} (keys go after --only)")
    selectors = [*(only or []), *(more_only or [])]
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        _fail(
            f"{out}: not an empty directory; choose a new or empty one so old scripts cannot mix with this plan"
        )
    engine_dialect: Dialect = "tsql" if dialect == "tsql" else "db2"
    now = datetime.now(UTC)
    options = Options(
        generator=_generator(),
        backup_max_age_hours=backup_max_age_hours,
        backup_check="warn" if backup_check == "warn" else "error",
    )
    log_paths: dict[str, str] = {}
    for item in db2_log_path or []:
        tier, sep, path = item.partition("=")
        if not sep or not tier or not path:
            _fail(f"--db2-log-path takes TIER=PATH, got {item!r}")
        log_paths[tier] = path
    try:
        policy = load_policy(policy_file)
        spots = tier_spots(policy)
        unknown = sorted(set(log_paths) - {t.name for t in spots})
        if unknown:
            _fail(f"--db2-log-path: {', '.join(unknown)} is not a tier of the policy")
        # the policy's locations.db2_log_path, unless --db2-log-path names the tier
        spots = [replace(t, db2_log_path=log_paths.get(t.name, t.db2_log_path)) for t in spots]
        doc = read_advice(advice)
        selection = select_moves(
            doc,
            source=str(advice),
            tiers=spots,
            dialect=engine_dialect,
            only=selectors,
            read_only=read_only or [],
        )
        pairs, unsupported = build(selection.moves, engine_dialect, options, now)
    except (PolicyError, PlanError) as exc:
        _fail(str(exc))
    files: dict[str, bytes] = {}
    entries = []
    for order, (move, forward, rollback) in enumerate(pairs, start=1):
        entry, written = _entry(order, move, forward, rollback, dialect)
        entries.append(entry)
        files.update(written)
    skipped = [*selection.skipped, *unsupported]
    plan = {
        "generator": f"{options.generator} ({GENERATOR_REVISION})",
        "generated_at": timestamp(now),
        "dialect": dialect,
        "advice": {"path": str(advice), "sha256": hashlib.sha256(advice.read_bytes()).hexdigest()},
        "policy": policy.name,
        "run": "run the forward scripts in `order`; roll back in the reverse order; see docs/running-scripts.md",
        "scripts": entries,
        "skipped": [{"server": s.server, "key": s.key, "reason": s.reason} for s in skipped],
    }
    files["plan.json"] = (json.dumps(plan, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (out / name).write_bytes(data)
    except OSError as exc:
        _fail(f"{out}: cannot write the scripts: {exc.strerror or exc}")
    for e in entries:
        extra = []
        if e["manual_step"]:
            extra.append("MANUAL STEP: run, copy the files it lists, run again")
        if e["restart_required"]:
            extra.append("takes effect at the next restart")
        note = f"  ({'; '.join(extra)})" if extra else ""
        typer.echo(f"{out / e['forward']['path']}{note}")
        typer.echo(f"{out / e['rollback']['path']}")
    typer.echo(f"{out / 'plan.json'}")
    if not entries:
        typer.echo("note: no moves to script", err=True)
    for s in skipped:
        typer.echo(f"note: skipped {s.server}|{s.key}: {s.reason}", err=True)


def register(app: typer.Typer) -> None:
    """Add `script` to a typer application."""
    app.command("script")(script_command)


def write_ilm_scripts(
    report: Any, policy: Any, plan_doc: dict[str, Any], *, dialect: str | None, out: Path
) -> None:
    """`tierwise ilm --scripts DIR --dialect D`: one forward and one rollback file per month of
    moves plus plan.json into a new or empty directory; prints the paths, notes on stderr."""
    from app.advice import report_json
    from app.ilm import ilm_script_files

    if dialect not in ("tsql", "db2"):
        _fail(f"--scripts needs --dialect tsql or db2, got {dialect!r}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        _fail(
            f"{out}: not an empty directory; choose a new or empty one so old scripts cannot mix with this plan"
        )
    engine_dialect: Dialect = "tsql" if dialect == "tsql" else "db2"
    options = Options(generator=_generator())
    try:
        files, index = ilm_script_files(
            report_json(report, policy),
            plan_doc,
            tiers=tier_spots(policy),
            dialect=engine_dialect,
            options=options,
            now=datetime.now(UTC),
            policy_name=policy.name,
        )
    except PlanError as exc:
        _fail(str(exc))
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (out / name).write_bytes(data)
    except OSError as exc:
        _fail(f"{out}: cannot write the scripts: {exc.strerror or exc}")
    for m in index["months"]:
        note = "  (takes effect at the next restart)" if m["restart_required"] else ""
        typer.echo(f"{out / m['forward']['path']}{note}")
        typer.echo(f"{out / m['rollback']['path']}")
    typer.echo(f"{out / 'plan.json'}")
    if not index["months"]:
        typer.echo("note: no partition moves to script", err=True)
    for s in index["skipped"]:
        typer.echo(f"note: skipped {s['server']}|{s['key']}: {s['reason']}", err=True)
