"""The `tierwise` command line."""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from advisors.quantities import change_pct, gb, io_wait, latency, pct, rate, size
from app.cli_placement import native_stdout_silenced
from app.cli_placement import register as register_placement
from app.cli_runtime import fail as _fail
from app.cli_runtime import read_files, store_line
from app.cli_runtime import runtime as _runtime
from app.cli_script import register as register_script
from app.cli_tiers import register as register_tiers
from app.cli_users import register as register_users
from app.secrets import configure_logging, logging_config
from app.settings import Settings, ensure_data_dir, get_settings, with_demo

app = typer.Typer(
    help="tierwise: storage-tier placement advice for SQL Server and DB2.", no_args_is_help=True
)
targets_app = typer.Typer(help="Instances to poll.", no_args_is_help=True)
app.add_typer(targets_app, name="targets")
register_users(app)
register_placement(app)
register_script(app)
register_tiers(app)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"tierwise {version('tierwise')}")
        raise typer.Exit()


@app.callback()
def _main(
    _version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    """tierwise: storage-tier placement advice for SQL Server and DB2."""


def _busiest_first(unknown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Unmatched locations, the most I/O first: the one a DBA must map first leads."""
    return sorted(unknown, key=lambda u: (-u["io_per_s"], -u["size_gb"], u["server"], u["location"]))


def _objects(n: int) -> str:
    return f"{n:,} object" if n == 1 else f"{n:,} objects"


def _warn_unknown_locations(unknown: list[dict[str, Any]]) -> None:
    """Objects on locations no tier of the policy names (or that two pools take) are left out of
    the advice: say on stderr, whatever the output format, where they are and what they weigh
    (the advice JSON's unknown_locations entries, app.advice.unknown_json)."""
    for u in _busiest_first(unknown):
        fix = (
            "narrow one of the pools in the policy"
            if u["pools"]
            else "map it to a tier in the policy's locations or on the Policy page"
        )
        typer.echo(
            f"warning: {u['server']}: {u['text']}: {_objects(u['objects'])}, {gb(u['size_gb'])}, "
            f"{rate(u['io_per_s'])}, not advised ({fix})",
            err=True,
        )


def _unmatched_line(unknown: list[dict[str, Any]], shown: int = 3) -> str | None:
    """The table's last line: how many objects the advice left out, where the busiest are."""
    if not unknown:
        return None
    busiest = _busiest_first(unknown)
    where = [f"{u['location']} {rate(u['io_per_s'])}" for u in busiest[:shown]]
    if len(busiest) > shown:
        where.append(f"{len(busiest) - shown} more")
    objects = _objects(sum(u["objects"] for u in unknown))
    fix = "map them to tiers in the policy's locations or on the Policy page"
    if any(u["pools"] for u in unknown):
        fix += " (where two pools take a location: narrow one of the pools)"
    return f"{objects} on unmatched locations were not advised ({', '.join(where)}): {fix}"


@app.command()
def serve(
    demo: bool = typer.Option(False, "--demo", help="run on the built-in simulated fleet"),
    host: str = typer.Option(None, help="address to listen on (default TIERWISE_HOST or 127.0.0.1)"),
    port: int = typer.Option(None, help="port (default TIERWISE_PORT or 8080)"),
) -> None:
    """Run the service: API, scheduler and (with --demo) the simulated fleet."""
    import uvicorn

    from app.main import create_app

    settings = with_demo(get_settings()) if demo else get_settings()
    ensure_data_dir(settings)
    configure_logging(settings.log_level)
    logging.getLogger("tierwise").info(store_line(settings))
    uvicorn.run(
        create_app(settings),
        host=host or settings.host,
        port=port or settings.port,
        log_level=settings.log_level.lower(),
        # uvicorn's loggers (access lines, tracebacks) through our one redacting handler
        log_config=logging_config(settings.log_level.upper()),
        **client_address_options(settings),
    )


def client_address_options(settings: Settings) -> dict[str, Any]:
    """How uvicorn resolves the client's address (request.client.host, which the login throttle
    and the audit log use): X-Forwarded-For is read only when TIERWISE_TRUSTED_PROXIES names
    proxies, and only from them; otherwise the connection's peer is the client, whatever headers
    say (uvicorn's own default would trust the header from 127.0.0.1)."""
    proxies = settings.trusted_proxy_list
    return {"proxy_headers": bool(proxies), "forwarded_allow_ips": proxies or []}


@targets_app.command("add")
def targets_add(
    name: str = typer.Argument(..., help="a name for the instance, e.g. SQLPROD01"),
    engine: str = typer.Option(..., help="sqlserver or db2"),
    connection: str = typer.Option(
        None,
        help="ODBC (SQL Server) or DB2 CLI connection string; prompted (hidden) when omitted. "
        "Prefer --password-env over a PWD= in the string.",
    ),
    password_env: str = typer.Option(None, help="environment variable that holds the password"),
    interval: int = typer.Option(None, help="poll interval in seconds (default 300)"),
) -> None:
    """Register an instance. The connection string is stored encrypted and never shown again."""
    from app.store.targets import TargetError, register_target

    settings, store, vault = _runtime()
    if connection is None:
        connection = typer.prompt("connection string", hide_input=True)
    try:
        with store.session() as s:
            register_target(
                s,
                name=name,
                engine=engine,
                connection=connection,
                vault=vault,
                password_env=password_env,
                poll_interval_s=interval or settings.default_poll_interval_s,
                now=datetime.now(UTC),
            )
    except TargetError as exc:
        _fail(str(exc))
    typer.echo(f"added target {name} ({engine})")


@targets_app.command("list")
def targets_list(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Targets with the outcome of their last poll."""
    from app.store.targets import statuses

    _, store, _ = _runtime()
    now = datetime.now(UTC)
    with store.session() as s:
        rows = statuses(s)
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "name": r.name,
                        "engine": r.engine,
                        "source": r.source,
                        "state": r.state(now),
                        "objects": r.objects,
                        "poll_interval_s": r.poll_interval_s,
                        "last_success_at": r.last_success_at.isoformat() if r.last_success_at else None,
                        "last_error": r.last_error,
                        "last_error_at": r.last_error_at.isoformat() if r.last_error_at else None,
                        "consecutive_failures": r.consecutive_failures,
                    }
                    for r in rows
                ],
                indent=2,
            )
        )
        return
    if not rows:
        typer.echo("no targets (add one with `tierwise targets add`, or import files with `tierwise import`)")
        return
    for r in rows:
        last = r.last_success_at.strftime("%Y-%m-%d %H:%M:%SZ") if r.last_success_at else "never"
        line = (
            f"{r.id:>4} {r.name:<32} {r.engine:<9} {r.state(now):<12} objects={r.objects:<5} last ok {last}"
        )
        if r.last_error and r.consecutive_failures:
            line += f"  error: {r.last_error}"
        typer.echo(line)


@targets_app.command("test")
def targets_test(name: str = typer.Argument(..., help="the target's name or id")) -> None:
    """Connect once and read the counters, without storing them."""
    from app.collect import read_target
    from app.store.targets import TargetError, get_target
    from connectors.records import SourceError

    settings, store, vault = _runtime()
    try:
        with store.session() as s:
            target = get_target(s, name)
            s.expunge(target)
        snap = read_target(target, vault, now=datetime.now(UTC), timeout_s=settings.poll_timeout_s)
    except (TargetError, SourceError) as exc:
        _fail(f"{name}: {exc}", code=1)
    typer.echo(f"{name}: ok, server {snap.server}, {len(snap.samples)} objects")


@targets_app.command("remove")
def targets_remove(
    name: str = typer.Argument(..., help="the target's name or id"),
    yes: bool = typer.Option(False, "--yes", help="do not ask"),
) -> None:
    """Remove a target and everything collected from it."""
    from app.store.targets import TargetError, get_target

    _, store, _ = _runtime()
    if not yes:
        typer.confirm(f"remove {name} and all its samples?", abort=True)
    try:
        with store.session() as s:
            target = get_target(s, name)
            label = target.name
            s.delete(target)
    except TargetError as exc:
        _fail(str(exc))
    typer.echo(f"removed {label}")


@app.command()
def collect(
    once: bool = typer.Option(False, "--once", help="poll every enabled target once and exit"),
    target: str = typer.Option(None, help="only this target"),
    worker: bool = typer.Option(
        False,
        "--worker",
        help="run a collector worker until SIGTERM/SIGINT (PostgreSQL, TIERWISE_POLLING=workers)",
    ),
    batch: int = typer.Option(
        None, "--batch", help="targets claimed at a time (default TIERWISE_WORKER_BATCH)"
    ),
    lease_seconds: int = typer.Option(
        None, "--lease-seconds", help="how long a claim lasts (default TIERWISE_WORKER_LEASE_S)"
    ),
) -> None:
    """Poll targets now (outside the service's schedule), or run a collector worker."""
    from app.collect import poll_target
    from app.store.targets import TargetError, get_target, pollable

    if worker:
        _collect_worker(batch, lease_seconds)
        return
    if not once:
        _fail("use --once (the service polls on its schedule: `tierwise serve`) or --worker")
    settings, store, vault = _runtime()
    try:
        with store.session() as s:
            ids = [get_target(s, target).id] if target else [t.id for t in pollable(s)]
    except TargetError as exc:
        _fail(str(exc))
    failures = 0
    for tid in ids:
        out = poll_target(store, vault, settings, tid, force=True)
        if out.ok and out.result is not None:
            typer.echo(f"{out.target}: ok, {out.result.samples} samples, {out.result.intervals} intervals")
        else:
            failures += 1
            typer.echo(f"{out.target}: FAILED: {out.error}")
    if failures:
        raise typer.Exit(1)


def _collect_worker(batch: int | None, lease_seconds: int | None) -> None:
    import signal
    import threading

    from app.workers import Worker, WorkerError, describe

    settings = get_settings()
    if not settings.database_url.startswith("postgresql"):
        _fail(
            "collector workers need the PostgreSQL store; with SQLite the one scheduler polls "
            "(single-process mode: `tierwise serve`)"
        )
    if settings.polling != "workers":
        _fail(
            "TIERWISE_POLLING is 'scheduler', so the scheduler polls; set TIERWISE_POLLING=workers for "
            "every tierwise process (serve and workers) so that targets are polled once"
        )
    configure_logging(settings.log_level)
    settings, store, vault = _runtime(settings)
    try:
        w = Worker(store, vault, settings, batch=batch, lease_s=lease_seconds)
    except WorkerError as exc:
        _fail(str(exc))
    stop = threading.Event()

    def _stop(signum: int, _frame: object) -> None:
        logging.getLogger("tierwise.workers").info("signal %d: finishing the batch, then stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    typer.echo(f"collector worker {w.owner}: batch {w.batch}, lease {w.lease_s} s", err=True)
    totals = w.run(stop)
    typer.echo(json.dumps({"worker": w.owner, **describe(totals)}))
    store.dispose()


@app.command("import")
def import_(
    files: list[Path] = typer.Argument(..., help="CSV files written by the collection scripts"),
    partial: bool = typer.Option(
        False,
        "--partial",
        help="keep the complete samples before a collection tool's error at the end of a file "
        "(e.g. `Communication link failure`) instead of refusing the file",
    ),
) -> None:
    """Import collection-script CSV files. A file with a bad line stores nothing; a file whose
    samples could not all be stored exits non-zero and can be imported again."""
    from app.importer import import_file
    from connectors.records import ImportFileError

    settings, store, _ = _runtime()
    failed = 0
    for path in files:
        if not path.is_file():
            typer.echo(f"error: {path}: no such file", err=True)
            failed += 1
            continue
        size = path.stat().st_size
        now = datetime.now(UTC)
        try:
            with typer.progressbar(length=2 * size, label=path.name, file=sys.stderr) as bar:
                seen = [0]

                def advance(done: int, bar=bar, seen=seen) -> None:  # type: ignore[no-untyped-def]
                    bar.update(done - seen[0])
                    seen[0] = done

                out = import_file(store, path, progress=advance, now=now, partial=partial)
        except ImportFileError as exc:
            typer.echo(f"error: {_import_failed(exc)}", err=True)
            failed += 1
            continue
        if out.already_imported:
            typer.echo(f"{path}: already imported, nothing to do")
            continue
        typer.echo(_import_summary(str(path), out))
        if out.grew_to is not None:
            typer.echo(f"{path}: note: {_grew_note(out)}", err=True)
        for note in _import_notes(out, now, settings.sample_retention_days, settings.rollup_retention_days):
            typer.echo(f"{path}: note: {note}", err=True)
        if out.result.ignored_count:
            failed += 1
            typer.echo(_ignored_report(str(path), out), err=True)
    store.dispose()
    if failed:
        raise typer.Exit(1)


def _import_failed(exc: Exception) -> str:
    """A refused file, saying what was stored: nothing (the first pass refused it), or the samples
    committed before the second pass met a change in the file (ImportStoppedError says how many)."""
    from app.importer import ImportStoppedError

    if isinstance(exc, ImportStoppedError):
        return str(exc)
    return f"{exc} (nothing from this file was stored)"


def _grew_note(out: Any) -> str:
    return (
        f"the file grew while it was imported ({out.size:,} -> {out.grew_to:,} bytes): what it held "
        "when the import began was imported; import it again once the collection has finished "
        "(the samples stored now are recognised)"
    )


def _import_summary(path: str, out: Any) -> str:
    """One line per imported file: what was stored and skipped."""
    r = out.result
    line = f"{path}: {r.snapshots} snapshots, {r.samples} samples, {r.intervals} intervals"
    if r.duplicates or out.read.duplicates:
        line += f", {r.duplicates + out.read.duplicates} duplicate samples ignored"
    if r.new_series:
        line += f", {r.new_series} series (re)started"
    if out.read.skipped_lines:
        line += f", {out.read.skipped_lines} heading/footer lines skipped"
    if out.read.cut_at_line is not None:
        line += (
            f"; --partial: stopped at line {out.read.cut_at_line} ({out.read.cut_reason!r}), "
            f"{out.read.dropped_samples} rows of the sample(s) in progress there dropped"
        )
    return line


def _import_notes(out: Any, now: datetime, sample_days: int, rollup_days: int) -> list[str]:
    """What the store will do with old data, said rather than done silently."""
    from datetime import timedelta

    notes: list[str] = []
    if out.oldest is None:
        return notes
    if out.oldest < now - timedelta(days=rollup_days):
        notes.append(
            f"samples from {out.oldest:%Y-%m-%d} are older than the roll-up retention ({rollup_days} "
            "days): they are removed at the next retention run and count in no advice"
        )
    elif out.oldest < now - timedelta(days=sample_days):
        notes.append(
            f"samples from {out.oldest:%Y-%m-%d} are older than the raw-sample retention ({sample_days} "
            "days): only their hourly roll-ups are kept after the next retention run"
        )
    return notes


def _ignored_report(path: str, out: Any) -> str:
    """Which samples were not stored, so the DBA can see why and re-import in the right order."""
    r = out.result
    lines = [
        f"error: {path}: {r.ignored_count} samples were not stored ({r.out_of_order} older than the "
        f"series already stored, {r.overlapping} overlapping stored intervals); the file is not "
        "marked as imported: import older files first, then this one again (stored samples are "
        "skipped). First ones:"
    ]
    for item in out.ignored:
        where = f"line {item.line}" if item.line is not None else "line ?"
        s = item.sample
        lines.append(f"  {where}: {s.key} on {s.server!r} at {s.sample_time.isoformat()}: {s.reason}")
    return "\n".join(lines)


report_app = typer.Typer(help="Report emails.", no_args_is_help=True)
app.add_typer(report_app, name="report")


@report_app.command("render")
def report_render(
    out: Path = typer.Option(..., "--out", help="write the message here (.eml), without sending"),
    scope: str = typer.Option(
        "fleet", help="fleet, a target's name or id, target:NAME or database:TARGET/DB"
    ),
    to: str = typer.Option("dba@example.invalid", help="recipients shown in the message"),
    fmt: str = typer.Option("html", "--format", help="html (with a text part) or text"),
) -> None:
    """Write the report email exactly as `report send` would send it (scripts attached), without
    sending it: to look at it before anyone gets it."""
    from app.mail.service import SubscriptionError, parse_recipients, rendered, report_message

    settings, store, _ = _runtime()
    try:
        msg = report_message(store, settings, scope, parse_recipients(to), now=datetime.now(UTC), fmt=fmt)
    except (ValueError, SubscriptionError) as exc:
        _fail(str(exc))
    out.write_bytes(rendered(msg))
    attached = [p.get_filename() for p in msg.iter_attachments()]
    listed = f" ({len(attached)} attached: {', '.join(map(str, attached))})" if attached else ""
    typer.echo(f"{out}: {msg['Subject']}{listed}")


@report_app.command("send")
def report_send(
    to: str = typer.Option(..., "--to", help="recipient address(es), comma-separated"),
    scope: str = typer.Option(
        "fleet", help="fleet, a target's name or id, target:NAME or database:TARGET/DB"
    ),
    fmt: str = typer.Option("html", "--format", help="html (with a text part) or text"),
) -> None:
    """Send the report now over the configured SMTP server; the delivery is recorded either way."""
    from app.mail.service import SubscriptionError, deliver, parse_recipients, report_message

    settings, store, _ = _runtime()
    now = datetime.now(UTC)
    try:
        msg = report_message(store, settings, scope, parse_recipients(to), now=now, fmt=fmt)
    except (ValueError, SubscriptionError) as exc:
        _fail(str(exc))
    result = deliver(store, settings, msg, now=now)
    if not result.ok:
        _fail(f"not delivered: {result.error} (recorded as delivery #{result.delivery_id})", code=1)
    typer.echo(f"sent to {msg['To']} (delivery #{result.delivery_id})")


@app.command()
def advise(
    input_files: list[Path] = typer.Option(
        ..., "--input", help="import CSV files (two or more samples per object); `--input a.csv b.csv` works"
    ),
    more_files: list[Path] = typer.Argument(None, hidden=True),
    policy_file: Path = typer.Option(None, "--policy", help="policy YAML (default: the shipped policy)"),
    output_format: str = typer.Option("json", "--format", help="json or table"),
    time_limit: float = typer.Option(10.0, "--time-limit", help="placement solver time limit, seconds"),
    explain: str = typer.Option(
        None, "--explain", help="print the evidence for one object: its key, name or server/database/name"
    ),
) -> None:
    """Classify objects and recommend a tier for each, from import files."""
    from advisors.advise import advise as run_advice
    from app.advice import report_json

    if output_format not in ("json", "table"):
        _fail("--format must be json or table")
    policy, snapshots, windows = read_files([*input_files, *(more_files or [])], policy_file)
    with native_stdout_silenced():
        newest = max((snap.sample_time for snap in snapshots), default=None)
        report = run_advice(windows, policy, now=newest, time_limit_s=time_limit)
    doc = report_json(report, policy)
    _warn_unknown_locations(doc["unknown_locations"])
    if explain is not None:
        _explain(doc["objects"], explain, doc.get("unknown_locations", []))
        return
    if output_format == "json":
        typer.echo(json.dumps(doc, indent=2))
        return
    _print_advice_table(doc, _history_notes(snapshots))


def _history_notes(snapshots: list[Any]) -> list[str]:
    """Per server with less than a day between its first and last sample: "1 hour of data: figures
    are a sample" (app.freshness defines the hours and the wording for every surface)."""
    from app.freshness import hours_of_history, short_history_note

    spans: dict[str, tuple[datetime, datetime]] = {}
    for snap in snapshots:
        first, last = spans.get(snap.server, (snap.sample_time, snap.sample_time))
        spans[snap.server] = (min(first, snap.sample_time), max(last, snap.sample_time))
    notes = []
    for server, (first, last) in sorted(spans.items()):
        note = short_history_note(hours_of_history(first, last))
        if note is not None:
            notes.append(f"{server}: {note}" if len(spans) > 1 else note)
    return notes


def _explain(objects: list[dict[str, Any]], query: str, unknown: list[dict[str, Any]]) -> None:
    """`advise --explain`: the evidence block of one object, and of the unit it moves with."""
    from advisors.explain import evidence_lines, match_objects

    found = match_objects(objects, query)
    if not found:
        left_out = "".join(f"; {u['text']} ({u['objects']} objects left out of the advice)" for u in unknown)
        _fail(f"no object matches {query!r}: give its key, name or server/database/name{left_out}")
    if len(found) > 1:
        typer.echo(
            f"{query!r} matches {len(found)} objects; name one by key or server/database/name:", err=True
        )
        for d in found:
            typer.echo(
                f"  {d['server']}/{d['database']}/{d['name']}  key {d['key']}  ({d['kind']})", err=True
            )
        raise typer.Exit(2)
    obj = found[0]
    typer.echo("\n".join(evidence_lines(obj)))
    unit = obj.get("placement_unit")
    if unit and unit != obj.get("key"):
        holder = next((d for d in objects if d["key"] == unit and d["server"] == obj["server"]), None)
        if holder is not None:
            typer.echo("\nmoves with:")
            typer.echo("\n".join(evidence_lines(holder)))


@app.command()
def ilm(
    input_files: list[Path] = typer.Option(
        ..., "--input", help="import CSV files with partitions and their files"
    ),
    more_files: list[Path] = typer.Argument(None, hidden=True),
    policy_file: Path = typer.Option(None, "--policy", help="policy YAML (default: the shipped policy)"),
    months: int = typer.Option(None, "--months", help="plan horizon in months (default: the policy's, 12)"),
    output_format: str = typer.Option("json", "--format", help="json or table"),
    scripts: Path = typer.Option(
        None, "--scripts", help="write forward and rollback scripts per month of moves, and plan.json"
    ),
    dialect: str = typer.Option(None, "--dialect", help="with --scripts: tsql (SQL Server) or db2"),
) -> None:
    """Plan when each date partition moves to which tier, with a capacity forecast per tier."""
    from advisors.advise import advise as run_advice
    from app.advice import AdviceInputError, unknown_json, windows_from_snapshots
    from app.ilm import make_plan, plan_json
    from connectors.files import read_import_file
    from connectors.records import ImportFileError, Snapshot
    from policies.loader import PolicyError, load_policy

    if output_format not in ("json", "table"):
        _fail("--format must be json or table")
    if months is not None and not 1 <= months <= 120:
        _fail("--months must be between 1 and 120")
    try:
        policy = load_policy(policy_file)
        snapshots: list[Snapshot] = []
        for path in [*input_files, *(more_files or [])]:
            snapshots.extend(read_import_file(path))
        windows = windows_from_snapshots(snapshots, policy)
    except (PolicyError, ImportFileError, AdviceInputError, OSError) as exc:
        _fail(str(exc))
    newest = max(s.sample_time for s in snapshots)
    with native_stdout_silenced():
        report = run_advice(windows, policy, now=newest, curve_points=0)
    _warn_unknown_locations([unknown_json(u) for u in report.unknown_locations])
    doc = plan_json(make_plan(report, policy, now=newest, months=months))
    if scripts is not None:
        from app.cli_script import write_ilm_scripts

        write_ilm_scripts(report, policy, doc, dialect=dialect, out=scripts)
        return
    if output_format == "json":
        typer.echo(json.dumps(doc, indent=2))
        return
    for t in doc["tables"]:
        fit = t["fit"]
        typer.echo(
            f"{t['server']} {t['database']} {t['table']}: heat halves every {fit['half_life_months']} months ({fit['method']}, r2 {fit['r2']})"
        )
        for p in t["partitions"]:
            moves = ", ".join(f"{m['date']} -> {m['to_tier']}" for m in p["moves"]) or "stays"
            typer.echo(
                f"  {p['range_start'] or '...'} .. {p['range_end'] or '...'}  {'new' if p['new'] else (p['current_tier'] or '?')!s:<6} {moves}"
            )
    for name in doc["not_date_partitioned"]:
        typer.echo(f"not date-partitioned (left to the ordinary advice): {name}")


def _print_advice_table(doc: dict, history_notes: list[str] | None = None) -> None:  # type: ignore[type-arg]
    for note in history_notes or []:
        typer.echo(f"warning: {note}")
    # every figure as the pages and the report read it (advisors.quantities), unknown as "-"
    header = (
        f"{'server':<12} {'database':<10} {'kind':<10} {'name':<24} {'size':>9} {'profile':<15} "
        f"{'now':<6} {'->':<6} {'reads/s':>9} {'per read':>9} {'latency':>9}"
    )
    typer.echo(header)
    typer.echo("-" * len(header))
    for o in doc["objects"]:
        m = o["metrics"]
        typer.echo(
            f"{o['server'][:12]:<12} {o['database'][:10]:<10} {o['kind']:<10} {o['name'][:24]:<24} "
            f"{size(o['size_bytes'] or 0):>9} {o['profile']:<15} {o['current_tier'] or '?'!s:<6} "
            f"{o['recommended_tier']:<6} {rate(m['read_iops'], '', '-'):>9} {size(m['avg_read_bytes'], '-'):>9} "
            f"{latency(m['avg_read_ms'], '-'):>9}"
        )
    s = doc["summary"]
    typer.echo(
        f"\n{s['moves']} moves; flash needed {gb(s['flash_gb_needed'])}; I/O wait "
        f"{io_wait(s['io_ms_per_s_now'])} -> {io_wait(s['io_ms_per_s_after'])}; placement {s['placement']['status']}"
    )
    unmatched = _unmatched_line(doc["unknown_locations"])
    if unmatched is not None:
        typer.echo(unmatched)


@app.command()
def executed(
    rec_id: int = typer.Argument(..., help="the approved recommendation's number"),
    by: str = typer.Option(..., "--by", help="who ran the script (recorded in the audit log)"),
    at: str = typer.Option("", "--at", help="when it ran, ISO date-time (no zone: UTC); default now"),
) -> None:
    """Record that ops ran an approved move's script; its verification starts from that time.
    Refused for a move whose scripts were refused (no safe script could be written for it)."""
    from app.review import ReviewError, mark_executed
    from app.store.policies import current_policy

    now = datetime.now(UTC)
    try:
        when = datetime.fromisoformat(at) if at else now
    except ValueError:
        _fail(f"--at: not a date and time: {at!r}")
        return
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    if when > now:
        _fail("--at is in the future")
    settings, store, _ = _runtime()
    try:
        with store.session() as s:
            rec = mark_executed(s, rec_id, username=by, when=when, now=now,
                                policy=current_policy(s, settings.policy_file))  # fmt: skip
            typer.echo(
                f"#{rec.id} {rec.name}: executed {when:%Y-%m-%d %H:%M} UTC by {by}; verification waiting"
            )
    except ReviewError as exc:
        _fail(str(exc))
    finally:
        store.dispose()


@app.command()
def verify(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Verify after change once: open verifications for seen relocations, judge the waiting ones
    (final once their after-window has passed), and print every verification with the track record."""
    from app.store.policies import current_policy
    from app.verify import (
        list_verifications,
        rollback_scripts,
        run_verification,
        track_record,
        verification_json,
    )

    settings, store, _ = _runtime()
    now = datetime.now(UTC)
    with store.session() as s:
        policy = current_policy(s, settings.policy_file)
    run_verification(store, policy, now=now)
    with store.session() as s:
        rows = list_verifications(s, limit=1000)
        scripts = rollback_scripts(s, [v.recommendation_id for v in rows if v.recommendation_id is not None])
        items = [verification_json(v, scripts.get(v.recommendation_id or 0)) for v in rows]
        record = track_record(s, policy.verification)
    store.dispose()
    if as_json:
        typer.echo(json.dumps({"track_record": record, "items": items}, indent=2))
        return
    if not items:
        typer.echo("no moves to verify yet (mark an approved move executed, or relocate a file)")
    for v in items:
        share = "" if v["share_of_prediction"] is None else f", achieved {pct(v['share_of_prediction'])}"
        i = v["interval"]
        interval = (
            ""
            if i is None
            else f", I/O wait {change_pct(i['estimate_pct'])} ({pct(i['level'])} interval "
            f"{change_pct(i['low_pct'])} to {change_pct(i['high_pct'])}, {i['days']} days)"
        )
        if v["status"] == "waiting" and v["extended_until"]:
            interval += f", measuring to {v['window_days']} days, until {v['extended_until'][:16]}"
        typer.echo(f"#{v['id']} {v['label']:<22} {v['name']} {v['from_tier'] or '?'} -> {v['to_tier'] or '?'} "
                   f"({v['trigger']} {v['changed_at'][:16]}{share}{interval})")  # fmt: skip
        for reason in v["reasons"]:
            typer.echo(f"    - {reason}")
        if v["rollback_script"] and v["status"] == "regressed":
            typer.echo(f"    rollback script: {v['rollback_script']['download']}")
    c = record["counts"]
    typer.echo(f"\ntrack record: {record['achieved']} of {record['judged']} judged moves achieved "
               f">= {pct(record['success_share'])} of the predicted gain ({pct(record['share_achieved'], 'n/a')}); "
               + ", ".join(f"{k} {n}" for k, n in c.items()))  # fmt: skip


@app.command("evaluate")
def evaluate_cmd(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Run the advice once over every enabled target, as the service's hourly job does, and say
    what it found: objects, moves, the I/O wait they save, objects on unknown locations, and
    targets judged on an older window because their newest data is older."""
    from app.evaluate import evaluate
    from app.store.policies import current_policy

    settings, store, _ = _runtime()
    with store.session() as s:
        policy = current_policy(s, settings.policy_file)
    with native_stdout_silenced():  # HiGHS's stray line must not break the JSON (ERGO-Code/HiGHS#2783)
        result = evaluate(store, policy, now=datetime.now(UTC))
    store.dispose()
    sync = result.sync
    _warn_unknown_locations([u for rows in result.unknown_detail.values() for u in rows])
    if as_json:
        typer.echo(json.dumps({
            "objects": result.objects, "moves": result.moves,
            "io_ms_per_s_now": result.io_ms_per_s_now, "io_ms_per_s_after": result.io_ms_per_s_after,
            "recommendations": {"created": sync.created, "updated": sync.updated,
                                "superseded": sync.superseded, "withdrawn": sync.withdrawn},
            "unknown_locations": result.unknown_locations, "unknown_detail": result.unknown_detail,
            "data_ends": result.data_ends,
        }, indent=2))  # fmt: skip
        return
    if not result.objects and not result.unknown_locations:
        typer.echo(
            "no data to advise on: add a target (tierwise targets add) or import files (tierwise import)"
        )
        return
    saved = result.io_ms_per_s_now - result.io_ms_per_s_after
    typer.echo(
        f"{result.objects} objects advised; {result.moves} moves; I/O wait {io_wait(result.io_ms_per_s_now)} -> "
        f"{io_wait(result.io_ms_per_s_after)} ({io_wait(saved)} saved)"
    )
    typer.echo(
        f"recommendations: {sync.created} new, {sync.updated} updated, {sync.superseded} superseded, "
        f"{sync.withdrawn} withdrawn"
    )
    for name, count in result.unknown_locations.items():  # each location is on stderr, busiest first
        typer.echo(
            f"{name}: {count} objects on locations that match no tier of the policy (left out of the moves; "
            "map them on the Policy page or in the tiers' locations)"
        )
    for name, note in result.data_ends.items():
        typer.echo(f"{name}: {note}")


def main() -> None:
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    app()


if __name__ == "__main__":
    main()
