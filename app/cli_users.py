"""`tierwise users`: local accounts and API tokens for the web UI and API.

`register(app)` adds the `users` command group to a typer application. Every change is audited
under the OS account that ran it (`cli:<user>`); a bad name or role is a message and exit code 2.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import typer

from app.cli_runtime import fail, runtime

users_app = typer.Typer(help="Local accounts for the web UI and API.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the `users` commands to the `tierwise` application."""
    app.add_typer(users_app, name="users")


@users_app.command("add")
def users_add(
    username: str = typer.Argument(..., help="login name"),
    role: str = typer.Option("viewer", help="viewer, approver or admin"),
    admin: bool = typer.Option(False, "--admin", help="same as --role admin"),
    password: str = typer.Option(
        None, help="prompted (hidden, twice) when omitted; prefer the prompt over the shell history"
    ),
) -> None:
    """Create an account. The first admin is created here; later ones too."""
    from app.store.users import UserError, add_user

    _, store, _ = runtime()
    if password is None:
        password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
    try:
        with store.session() as s:
            add_user(
                s,
                username=username,
                password=password,
                role="admin" if admin else role,
                now=datetime.now(UTC),
            )
    except UserError as exc:
        fail(str(exc))
    typer.echo(f"added user {username} ({'admin' if admin else role})")


@users_app.command("token")
def users_token(
    username: str = typer.Argument(..., help="the account the token acts as"),
    name: str = typer.Option("api", help="what the token is for, e.g. prometheus"),
) -> None:
    """Create an API token (shown once; only its SHA-256 is stored). Use `Authorization: Bearer …`."""
    from sqlalchemy import select

    from app.store.models import User
    from app.store.tokens import create_token

    _, store, _ = runtime()
    with store.session() as s:
        user = s.scalar(select(User).where(User.username == username))
        if user is None:
            fail(f"no user named {username!r}")
        token = create_token(s, user=user, name=name, now=datetime.now(UTC))
    typer.echo(token)


@users_app.command("tokens")
def users_tokens(
    username: str = typer.Argument(None, help="only this account's tokens"),
) -> None:
    """List API tokens: id, name, user, created, last used, revoked. Never the token itself."""
    from app.store.tokens import list_tokens

    _, store, _ = runtime()
    with store.session() as s:
        rows = list_tokens(s, username)
    store.dispose()
    if not rows:
        typer.echo("no API tokens" + (f" for {username}" if username else ""))
        return

    def when(t: datetime | None) -> str:
        return "never" if t is None else f"{t:%Y-%m-%d %H:%M} UTC"

    typer.echo(f"{'id':>5}  {'name':<20} {'user':<16} {'created':<20} {'last used':<20} state")
    for t in rows:
        state = "revoked" if t.revoked else "active"
        typer.echo(
            f"{t.id:>5}  {t.name[:20]:<20} {t.username[:16]:<16} {when(t.created_at):<20} "
            f"{when(t.last_used_at):<20} {state}"
        )


@users_app.command("revoke-token")
def users_revoke_token(
    token_id: int = typer.Argument(..., help="the token's id (see `users tokens`)"),
) -> None:
    """Revoke an API token at once: its next request is refused (401). Audited."""
    from app.store.recommendations import audit
    from app.store.tokens import TokenError, revoke_token

    _, store, _ = runtime()
    try:
        with store.session() as s:
            t = revoke_token(s, token_id)
            summary = f"revoked API token #{t.id} ({t.name}) of {t.username}"
            audit(s, at=datetime.now(UTC), username=_cli_actor(), action="revoke_token", subject_type="user",
                  subject_id=t.username, summary=summary)  # fmt: skip
    except TokenError as exc:
        fail(str(exc))
    finally:
        store.dispose()
    typer.echo(summary)


def _cli_actor() -> str:
    """Who ran a CLI admin command, for the audit log (the OS account: the CLI has no login)."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _user_change(change: str, username: str, apply: Any) -> None:
    """Run one account change in a transaction with its audit entry; a UserError is a clear exit."""
    from app.store.recommendations import audit
    from app.store.users import UserError

    _, store, _ = runtime()
    try:
        with store.session() as s:
            summary = apply(s)
            audit(s, at=datetime.now(UTC), username=_cli_actor(), action=change, subject_type="user",
                  subject_id=username, summary=summary)  # fmt: skip
    except UserError as exc:
        fail(str(exc))
    store.dispose()
    typer.echo(summary)


@users_app.command("role")
def users_role(
    username: str = typer.Argument(..., help="login name"),
    role: str = typer.Argument(..., help="viewer, approver or admin"),
) -> None:
    """Change an account's role. Its web logins end at once (a session never outlives its role)."""
    from app.store.users import set_role

    def apply(s: Any) -> str:
        set_role(s, username=username, role=role)
        return f"{username} is now {role}; their web logins were ended"

    _user_change("set_role", username, apply)


@users_app.command("passwd")
def users_passwd(
    username: str = typer.Argument(..., help="login name"),
    password: str = typer.Option(None, help="prompted (hidden, twice) when omitted"),
) -> None:
    """Set an account's password. Its web logins end at once."""
    from app.store.users import set_password

    new = password if password is not None else typer.prompt("new password", hide_input=True,
                                                              confirmation_prompt=True)  # fmt: skip

    def apply(s: Any) -> str:
        set_password(s, username=username, password=new)
        return f"password of {username} changed; their web logins were ended"

    _user_change("set_password", username, apply)


@users_app.command("delete")
def users_delete(
    username: str = typer.Argument(..., help="login name"),
    yes: bool = typer.Option(False, "--yes", help="do not ask"),
) -> None:
    """Delete an account with its API tokens and web logins."""
    from app.store.users import delete_user

    if not yes:
        typer.confirm(f"Delete user {username}, their API tokens and logins?", abort=True)

    def apply(s: Any) -> str:
        delete_user(s, username=username)
        return f"deleted user {username}, their API tokens and web logins"

    _user_change("delete_user", username, apply)


@users_app.command("list")
def users_list() -> None:
    """Accounts and their roles."""
    from sqlalchemy import select

    from app.store.models import User

    _, store, _ = runtime()
    with store.session() as s:
        for u in s.scalars(select(User).order_by(User.username)):
            typer.echo(f"{u.username:<24} {u.role:<9} {'disabled' if u.disabled else ''}")
