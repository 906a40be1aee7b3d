"""T-SQL script frame: batches separated by `GO`, for sqlcmd and SSMS (SQLCMD mode).

The scaffolding every T-SQL script shares (header, SQLCMD-mode gate, step wrapper, fail helpers,
progress lines, last batch); the checks are in tsql_checks, the moves in the tsql_* modules, and
tsql.render picks the module for an action.

How a script stops (domain.md §7):

- The first batch holds `:on error exit`, so sqlcmd (and SSMS in SQLCMD mode) stops at the first
  error of any statement. The second batch checks that sqlcmd variables are substituted; when
  they are not (SSMS without SQLCMD mode, or `sqlcmd -x`), it raises and sets NOEXEC, so nothing
  after it runs in any tool.
- A failed pre-check raises `RAISERROR(N'%s', 16, 1, @msg)`, sets `NOEXEC ON` and `RETURN`s:
  RAISERROR at severity 16 does not end the batch (THROW would, before NOEXEC could be set;
  NOEXEC first would silence THROW), the message goes through `%s` so a `%` in a name is never a
  format, NOEXEC stops every later batch even where `:on error exit` is not honoured, and RETURN
  ends the current batch at once (sqlcmd only acts on `:on error exit` after the batch, and the
  rest of the batch must not run whatever the tool). The last batch sets NOEXEC OFF again and
  says whether the script finished or stopped.
- Names never contain line breaks or `$(` (quoting.check_name refuses them), so no generated line
  can be a `GO`, a sqlcmd command or a variable; the only variables in a script are the gate's
  `$(TierwiseSqlcmdMode)` and `$(TW_CHECK_ONLY)`.

The check-only run (`sqlcmd -v TW_CHECK_ONLY=1`): a script is two sections. `Batches.check` adds a
pre-check batch, `Batches.add` a batch of the change section; `Batches.text` writes the gate, every
check batch, the barrier, then the change section. The barrier prints the plan and the estimated
duration; with TW_CHECK_ONLY=1 it sets NOEXEC ON and RETURNs, so no batch of the change section
runs (the same stop as a failed check), and the last batch says the check-only run passed. A
writer cannot put a change before the barrier except by calling `check`, and the structural tests
(tests/migrations/test_tsql_session_rules.py) refuse a change statement in a check batch.

sqlcmd's variable precedence (Microsoft Learn, "sqlcmd - Use with scripting variables", lowest to
highest: environment variables, `sqlcmd -v X=Y`, `:setvar X Y`) means a `:setvar TW_CHECK_ONLY 0`
default in the script would override the `-v` of the command line. So the script declares no
default: it reads `$(TW_CHECK_ONLY)` in its first SQL batch, and "if a script references a variable
that isn't an environment variable or isn't defined by using setvar, an error message is returned
and the execution of the script stops" (same page). Every run therefore says which run it is,
`-v TW_CHECK_ONLY=1` or `-v TW_CHECK_ONLY=0`; a value other than 0 or 1 stops the gate.

Session options: the gate sets the seven SET options that indexed views, indexes on computed
columns and filtered indexes require (Microsoft Learn, "SET options that affect results" and
CREATE INDEX, "Required SET options for filtered indexes": ANSI_NULLS, ANSI_PADDING,
ANSI_WARNINGS, ARITHABORT, CONCAT_NULL_YIELDS_NULL and QUOTED_IDENTIFIER ON, NUMERIC_ROUNDABORT
OFF). sqlcmd connects with QUOTED_IDENTIFIER OFF unless run with -I ("sqlcmd utility", -I), and a
statement that maintains such an index fails with error 1934 under the wrong options. A SET at
batch level lasts for the session, so it covers every later batch.

"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from migrations.header import Operations, header_lines
from migrations.plan import Move, Options
from migrations.quoting import comment_lines, tsql_str

SQLCMD_VARIABLE = "TierwiseSqlcmdMode"
CHECK_ONLY = "TW_CHECK_ONLY"  # sqlcmd -v TW_CHECK_ONLY=1: every pre-check, the plan, no change
CHECK_ONLY_TABLE = "#tierwise_check_only"  # the barrier's note to the last batch: check-only, all passed
SESSION_OPTIONS = (
    "SET ANSI_NULLS ON;",
    "SET ANSI_PADDING ON;",
    "SET ANSI_WARNINGS ON;",
    "SET ARITHABORT ON;",
    "SET CONCAT_NULL_YIELDS_NULL ON;",
    "SET QUOTED_IDENTIFIER ON;",
    "SET NUMERIC_ROUNDABORT OFF;",
)
MIN_MAJOR_VERSION = 11  # SQL Server 2012: sys.databases.replica_id, sys.dm_exec_sessions.database_id
CLOUD_EDITIONS = "5, 6, 8, 9, 11"  # Azure SQL Database, Synapse, Managed Instance, Edge, serverless


def sqlcmd_command(server: str, file: str, *, check_only: bool) -> str:
    """How a script runs: the check-only run (TW_CHECK_ONLY=1: every pre-check, the plan, no
    change) or the real one (0). -b: exit code 1 on an error; -f 65001: the file is UTF-8. The
    header, `tierwise script` and the Scripts page all print this."""
    quoted = f'"{file}"' if " " in file and not file.startswith("<") else file
    return f"sqlcmd -S {server} -E -b -f 65001 -v {CHECK_ONLY}={1 if check_only else 0} -i {quoted}"


def fail(condition: str, message: str, indent: str = "") -> list[str]:
    """IF condition: raise `message` (a T-SQL string expression) and stop every later batch."""
    assign = [] if message == "@msg" else [f"{indent}    SET @msg = {message};"]
    return [
        f"{indent}IF {condition}",
        f"{indent}BEGIN",
        *assign,
        # before the error: sqlcmd's `:on error exit` ends the run after this batch, so finish()'s
        # STOPPED line never prints there
        say(STOPPED, indent + "    "),
        f"{indent}    RAISERROR(N'%s', 16, 1, @msg);",
        f"{indent}    SET NOEXEC ON;",
        f"{indent}    RETURN;",
        f"{indent}END;",
    ]


def fail_if_msg(indent: str = "") -> list[str]:
    """Raise when an earlier query left a message in @msg."""
    return fail("@msg IS NOT NULL", "@msg", indent)


# Progress lines: PRINT output is buffered until the batch ends (a long EMPTYFILE would print
# nothing for an hour), RAISERROR at severity 0 WITH NOWAIT is sent at once. RAISERROR's
# arguments cannot be expressions, so the line (with its UTC timestamp) is built into @tw_say
# first, and passed through %s so a % in a name is never a format. (RAISERROR page: "WITH
# NOWAIT sends messages immediately to the client"; msg_str is limited to 2,047 characters.)
# Batches.add declares the frame's variables in every batch that uses them.
FRAME_VARIABLES = {"@tw_say": "nvarchar(2048)", "@tw_t0": "datetime2(3)", "@tw_err": "nvarchar(2048)"}
NOW_UTC = "CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z '"


def say_expr(expr: str, indent: str = "") -> str:
    """Send `tierwise: <UTC timestamp> <expr>` now; `expr` is an nvarchar T-SQL expression."""
    return (
        f"{indent}SET @tw_say = N'tierwise: ' + {NOW_UTC} + {expr};\n"
        f"{indent}RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;"
    )


def say(text: str, indent: str = "") -> str:
    """Send `tierwise: <UTC timestamp> <text>` now (two statements: use inside BEGIN … END)."""
    return say_expr(tsql_str(text), indent)


STOPPED = (
    "STOPPED: the error below stopped the script; the later steps do not run. Every step checks "
    "first, so run the script again once the cause is fixed."
)


def step(n: int, total: int, title: str, body: list[str], hint: str = "", indent: str = "") -> list[str]:
    """Step n of total: `step n/total start|done|error` progress lines around `body` (done with its
    duration in seconds). On an error: the error line (number and text kept), STOPPED, then the
    frame's stop (RAISERROR 16, NOEXEC ON, RETURN). sqlcmd's `:on error exit` ends the run after
    this batch, so the STOPPED line must come from here, not from finish()."""
    label = f"step {n}/{total}"
    i = indent + "    "
    tail = f" {hint}" if hint else ""
    return [
        f"{indent}BEGIN TRY",
        f"{i}SET @tw_t0 = SYSUTCDATETIME();",
        say(f"{label} start: {title}", i),
        *body,
        say_expr(
            f"{tsql_str(f'{label} done: {title} (')} + CAST(DATEDIFF(SECOND, @tw_t0, SYSUTCDATETIME()) "
            "AS nvarchar(20)) + N' s)'",
            i,
        ),
        f"{indent}END TRY",
        f"{indent}BEGIN CATCH",
        f"{i}SET @tw_err = {tsql_str(f'{label} error: {title}: error ')} + CAST(ERROR_NUMBER() AS nvarchar(10))"
        f" + N': ' + ERROR_MESSAGE(){' + ' + tsql_str(tail) if tail else ''};",
        say_expr("@tw_err", i),
        say(STOPPED, i),
        f"{i}SET @tw_err = N'tierwise: ' + @tw_err;",
        f"{i}RAISERROR(N'%s', 16, 1, @tw_err);",
        f"{i}SET NOEXEC ON;",
        f"{i}RETURN;",
        f"{indent}END CATCH;",
    ]


def _declared(lines: tuple[str | list[str], ...]) -> list[str]:
    """One batch's lines, with the frame's variables it uses declared first."""
    out: list[str] = []
    for item in lines:
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    used = [v for v in FRAME_VARIABLES if any(v in line for line in out)]
    if used:
        out.insert(0, "DECLARE " + ", ".join(f"{v} {FRAME_VARIABLES[v]}" for v in used) + ";")
    return out


@dataclass
class Batches:
    """A script under construction: header lines, the pre-check batches (`check`), and the
    change section (`add`), each batch a list of lines. `text` puts the gate first and the
    check-only barrier between the two sections, so nothing added with `add` runs in a
    check-only run."""

    header: list[str]
    batches: list[list[str]] = field(default_factory=list)  # the change section, in order
    checks: list[list[str]] = field(default_factory=list)  # the pre-checks, before the barrier

    def check(self, *lines: str | list[str]) -> None:
        """A pre-check batch: reads, never changes; it runs in the check-only run too."""
        self.checks.append(_declared(lines))

    def add(self, *lines: str | list[str]) -> None:
        """A batch of the change section: after the barrier, never reached by a check-only run."""
        self.batches.append(_declared(lines))

    def text(self) -> str:
        parts = [*comment_lines(self.header, "tsql")]
        parts += [":on error exit", f':setvar {SQLCMD_VARIABLE} "on"', "GO"]
        for b in [_declared((gate(),)), *self.checks, _declared((barrier(self.header),)), *self.batches]:
            parts.extend(b)
            parts.append("GO")
        return "\n".join(parts) + "\n"


def gate() -> list[str]:
    """The first SQL batch: SQLCMD mode on, TW_CHECK_ONLY given as 0 or 1, the session options."""
    return [
        f"IF N'$({SQLCMD_VARIABLE})' <> N'on'",
        "BEGIN",
        "    RAISERROR(N'%s', 16, 1, N'tierwise: run this script with sqlcmd -b, or in SSMS with Query > "
        "SQLCMD Mode switched on; never with sqlcmd -x. Nothing was changed.');",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END;",
        f"IF N'$({CHECK_ONLY})' NOT IN (N'0', N'1')",
        "BEGIN",
        "    RAISERROR(N'%s', 16, 1, N'tierwise: say which run this is: sqlcmd -v "
        f"{CHECK_ONLY}=1 (check only: every pre-check, the plan, no change) or -v {CHECK_ONLY}=0 (the real run). "
        "Nothing was changed.');",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END;",
        "-- the SET options indexed views, computed-column and filtered indexes require (error 1934 otherwise);",
        "-- sqlcmd connects with QUOTED_IDENTIFIER OFF. Set here, they last for the session.",
        *SESSION_OPTIONS,
        f"IF N'$({CHECK_ONLY})' = N'1'",
        "BEGIN",
        say(
            f"CHECK-ONLY RUN ({CHECK_ONLY}=1): every pre-check runs against this server, then the plan is printed; "
            "nothing is changed.",
            "    ",
        ),
        "END;",
    ]


def _plan_lines(header: list[str]) -> list[str]:
    """What the barrier prints from the header: what moves, from and to, the method (one line),
    each file, and the estimated duration."""
    out: list[str] = []
    method: list[str] = []
    files: list[str] = []
    section = ""
    for line in [*header, ""]:
        if section and line.startswith("  "):
            if line.strip() == "Files:":
                section = "files"
            else:
                (files if section == "files" else method).append(line.strip())
            continue
        if section:
            out += ["plan: method: " + " ".join(method), *[f"plan: file {f}" for f in files]]
            section = ""
        if line.startswith(("Moves:", "Server:", "Database:", "From:", "To:")):
            out.append("plan: " + " ".join(line.split()))
        elif line.startswith("Method:"):
            section = "method"
        elif line.startswith("  Duration:"):
            out.append("estimated duration: " + line.split(":", 1)[1].strip())
    return out


def barrier(header: list[str]) -> list[str]:
    """Between the pre-checks and the changes: the plan and the estimated duration; in a
    check-only run, the end of the run (NOEXEC ON, as a failed check stops, and a note for the
    last batch)."""
    return [
        *[say(line) for line in _plan_lines(header)],
        f"IF N'$({CHECK_ONLY})' = N'1'",
        "BEGIN",
        say(
            f"check-only run: every pre-check above passed; nothing was changed and no step below runs ({CHECK_ONLY}=1).",
            "    ",
        ),
        f"    IF OBJECT_ID(N'tempdb..{CHECK_ONLY_TABLE}') IS NULL CREATE TABLE {CHECK_ONLY_TABLE} (passed bit);",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END;",
        say("every pre-check passed: the changes start now."),
    ]


def finish(done: str) -> list[str]:
    """The last batch: NOEXEC OFF and the outcome. With sqlcmd's `:on error exit` a failed check
    or step ends the run at its own batch, so this batch runs only when nothing failed; the
    STOPPED line there is for a run without `:on error exit` (the failing batch printed its own,
    see fail() and step())."""
    return [
        "DECLARE @tw_finished bit;",
        "SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)",
        "SET NOEXEC OFF;",
        "IF @tw_finished = 1",
        "BEGIN",
        say(done, "    "),
        "END",
        f"ELSE IF OBJECT_ID(N'tempdb..{CHECK_ONLY_TABLE}') IS NOT NULL",
        "BEGIN",
        say(
            f"check-only run finished: every pre-check passed and nothing was changed. In the change window run "
            f"this script with -v {CHECK_ONLY}=0.",
            "    ",
        ),
        f"    DROP TABLE {CHECK_ONLY_TABLE};",
        "END",
        "ELSE",
        "BEGIN",
        say(
            "STOPPED: a check or step above failed or asked for a manual step; later steps did not run.",
            "    ",
        ),
        # a marker for the session: in a file of several scripts (tierwise ilm --scripts) the
        # next part's guard (part_guard) stops there instead of running on after NOEXEC OFF
        "    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);",
        "END;",
    ]


def part_guard() -> list[str]:
    """The first batch of every later part of a multi-script file: stop when an earlier part
    stopped (its finish batch left #tierwise_stopped in the session)."""
    return [
        "IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NOT NULL",
        "BEGIN",
        "    RAISERROR(N'%s', 16, 1, N'tierwise: an earlier part of this file stopped; this part and the later ones do not run.');",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END;",
    ]


MAJOR_VERSION = "CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int)"
FS_NOTE = (
    "File-system checks use sys.dm_os_file_exists (SQL Server 2017+) and sys.dm_os_volume_stats / "
    "sys.dm_os_enumerate_fixed_drives (2019+); xp_fileexist / xp_fixeddrives only on older versions. "
    "The script prints which one it used."
)


def make_header(
    move: Move,
    direction: str,
    forward: Move,
    options: Options,
    generated_at: datetime,
    *,
    what: str,
    source: str,
    destination: str,
    method: list[str],
    limits: list[str],
    operations: Operations | None = None,
) -> list[str]:
    run = [
        "1. check only (days before, in daylight; changes nothing): "
        + sqlcmd_command(move.target.server, "<this file>", check_only=True),
        "2. in the change window: " + sqlcmd_command(move.target.server, "<this file>", check_only=False),
        f"   SSMS: Query > SQLCMD Mode, and a first line :setvar {CHECK_ONLY} 1 (or 0).",
        "Never run it with sqlcmd -x. Read docs/running-scripts.md first.",
        FS_NOTE,
    ]
    return header_lines(
        move,
        direction=direction,
        forward=forward,
        dialect_title="T-SQL",
        what=what,
        source=source,
        destination=destination,
        method=method,
        limits=limits,
        run=run,
        options=options,
        generated_at=generated_at,
        operations=operations,
    )
