"""`tierwise script`: forward and rollback scripts for the recommended moves in an advice file.

`register(app)` adds the command to a typer application. It reads the JSON printed by
`tierwise advise`, writes one forward and one rollback script per move (for DB2 also a
check-only `.check.db2`: the same checks, none of the steps, run first) plus `plan.json` (run
order, sha256 of each file) into an empty or new directory, and prints the paths. Bad input is a
message on stderr naming the file and the object, exit code 2, and nothing written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import typer

from app.cli_runtime import fail as _fail
from app.script_spots import file_name, object_pool, pool_spots, script_options
from migrations import (
    AdviceError,
    Dialect,
    Move,
    Options,
    PlanError,
    Script,
    Selection,
    Skipped,
    Unsupported,
    render_check,
    render_pair,
    select_moves,
)
from migrations.header import GENERATOR_REVISION, timestamp
from migrations.tsql_frame import sqlcmd_command
from policies.model import DEFAULT_POOL, Policy


def _generator() -> str:
    try:
        return f"tierwise {version('tierwise')}"
    except PackageNotFoundError:
        return "tierwise"


def split_advice(doc: Any) -> list[tuple[str, Any]]:
    """The advice document per pool, (pool, the document with that pool's objects), pools in the
    order their first object comes. Advice of one pool (or written before pools) is one part:
    the document itself, so its scripts are exactly as before pools."""
    if not isinstance(doc, dict) or not isinstance(doc.get("objects"), list):
        return [(DEFAULT_POOL, doc)]
    groups: dict[str, list[Any]] = {}
    for o in doc["objects"]:
        groups.setdefault(object_pool(o), []).append(o)
    if len(groups) <= 1:
        return [(next(iter(groups), DEFAULT_POOL), doc)]
    return [(pool, {**doc, "objects": objects}) for pool, objects in groups.items()]


def _keys(doc: Any) -> set[str]:
    """What --only / --read-only may name of a document's objects: KEY or SERVER|KEY."""
    out: set[str] = set()
    for o in doc["objects"]:
        if isinstance(o, dict):
            out |= {str(o.get("key")), f"{o.get('server')}|{o.get('key')}"}
    return out


def select_pool_moves(
    doc: Any,
    *,
    source: str,
    policy: Policy,
    dialect: Dialect,
    only: Sequence[str] = (),
    read_only: Sequence[str] = (),
    log_paths: Mapping[str, str] | None = None,
) -> Selection:
    """select_moves per storage pool, each pool's objects with its own tiers' locations; the
    moves of each pool in its own run order (pools are separate arrays: freeing space on one
    does not help another), pools one after the other."""
    parts = split_advice(doc)
    if len(parts) == 1:
        pool, whole = parts[0]
        return select_moves(whole, source=source, tiers=pool_spots(policy, pool, log_paths), dialect=dialect,
                            only=only, read_only=read_only)  # fmt: skip
    keys = [(pool, part, _keys(part)) for pool, part in parts]
    for sel in [*only, *read_only]:
        if not any(sel in k for _, _, k in keys):
            flag = "--only" if sel in only else "--read-only"
            raise AdviceError(f"{source}: {flag} {sel}: no object has that key (use KEY or SERVER|KEY)")
    moves: list[Move] = []
    skipped: list[Skipped] = []
    for pool, part, k in keys:
        mine = [sel for sel in only if sel in k]
        if only and not mine:
            continue  # --only names objects of other pools
        selection = select_moves(part, source=source, tiers=pool_spots(policy, pool, log_paths), dialect=dialect,
                                 only=mine, read_only=[sel for sel in read_only if sel in k])  # fmt: skip
        moves += selection.moves
        skipped += selection.skipped
    return Selection(tuple(moves), tuple(skipped))


def read_advice(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AdviceError(f"{path}: cannot read the file: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AdviceError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc


def build(
    moves: tuple[Move, ...], dialect: Dialect, options: Options, now: datetime, policy: Policy
) -> tuple[list[tuple[Move, Script, Script, Script | None]], list[Skipped]]:
    """Each move's forward and rollback scripts and (DB2) its check-only script."""
    pairs: list[tuple[Move, Script, Script, Script | None]] = []
    skipped: list[Skipped] = []
    for move in moves:
        try:  # each move's offline copy at the policy's copy rate for its tiers
            move_options = script_options(policy, move, options)
            forward, rollback = render_pair(move, dialect, move_options, now)
            check = render_check(move, dialect, move_options, now)
        except Unsupported as exc:
            skipped.append(Skipped(move.target.server, move.key, f"unsupported here: review: {exc}"))
            continue
        pairs.append((move, forward, rollback, check))
    return pairs, skipped


def _entry(
    order: int, move: Move, forward: Script, rollback: Script, dialect: str, check: Script | None = None
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
    for script in (forward, rollback, *([check] if check is not None else [])):
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
        help="DB2: TIER=PATH (or POOL/TIER=PATH), where an active log moved to that tier goes (NEWLOGPATH); "
        "overrides the policy's locations.db2_log_path; repeatable",
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
        tiers = [(pool, t.name) for pool in policy.pool_names() for t in policy.pool_tiers(pool)]
        names = {name for pool, tier in tiers for name in (tier, f"{pool}/{tier}")}
        unknown = sorted(set(log_paths) - names)
        if unknown:
            _fail(f"--db2-log-path: {', '.join(unknown)} is not a tier of the policy")
        # the policy's locations.db2_log_path, unless --db2-log-path names the tier
        doc = read_advice(advice)
        selection = select_pool_moves(
            doc,
            source=str(advice),
            policy=policy,
            dialect=engine_dialect,
            only=selectors,
            read_only=read_only or [],
            log_paths=log_paths,
        )
        pairs, unsupported = build(selection.moves, engine_dialect, options, now, policy)
    except (PolicyError, PlanError) as exc:
        _fail(str(exc))
    files: dict[str, bytes] = {}
    entries = []
    for order, (move, forward, rollback, check) in enumerate(pairs, start=1):
        entry, written = _entry(order, move, forward, rollback, dialect, check)
        if dialect == "tsql":
            entry["check_only"] = sqlcmd_command(
                move.target.server, str(out / entry["forward"]["path"]), check_only=True
            )
        entries.append(entry)
        files.update(written)
    skipped = [*selection.skipped, *unsupported]
    plan = {
        "generator": f"{options.generator} ({GENERATOR_REVISION})",
        "generated_at": timestamp(now),
        "dialect": dialect,
        "advice": {"path": str(advice), "sha256": hashlib.sha256(advice.read_bytes()).hexdigest()},
        "policy": policy.name,
        "run": (
            "run each move's check-only script (`check`: changes nothing) days before the window; then "
            if dialect == "db2"
            else "run each forward script with sqlcmd -v TW_CHECK_ONLY=1 first (`check_only`: every pre-check, "
            "changes nothing) days before the window; then with -v TW_CHECK_ONLY=0 "
        )
        + "run the forward scripts in `order`; roll back in the reverse order; see docs/running-scripts.md",
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
        if "check" in e:
            typer.echo(
                f"{out / e['check']['path']}  (check only: changes nothing; run it first, days before the window)"
            )
        if "check_only" in e:  # T-SQL: the forward script itself, with TW_CHECK_ONLY=1
            typer.echo(f"check first (changes nothing; days before the window): {e['check_only']}")
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
            tiers={pool: pool_spots(policy, pool) for pool in policy.pool_names()},
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
        if "check" in m:
            typer.echo(
                f"{out / m['check']['path']}  (check only: changes nothing; run it first, days before the month)"
            )
        typer.echo(f"{out / m['forward']['path']}{note}")
        typer.echo(f"{out / m['rollback']['path']}")
    typer.echo(f"{out / 'plan.json'}")
    if not index["months"]:
        typer.echo("note: no partition moves to script", err=True)
    for s in index["skipped"]:
        typer.echo(f"note: skipped {s['server']}|{s['key']}: {s['reason']}", err=True)
