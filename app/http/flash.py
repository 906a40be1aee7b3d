"""Flash messages: the confirmation a page shows after an action ("3 recommendations approved",
"policy saved"), held in the signed-in login's own row of the store (web_session.flash) and shown
once, by the next page that shows messages. Never taken from the URL: a link anyone can send
cannot make a signed-in page say "your password expired, call ..." (issue #33)."""

from __future__ import annotations

from fastapi import Request

from app.http.auth import SESSION_ID
from app.http.state import app_state
from app.store.users import set_flash, take_flash

MAX_FLASH = 4000  # characters kept; a confirmation is a line or two


def flash(request: Request, message: str) -> None:
    """Leave `message` for this login's next page; without a login there is no one to show it to."""
    sid = request.session.get(SESSION_ID)
    if sid:
        with app_state(request).store.session() as s:
            set_flash(s, str(sid), message[:MAX_FLASH])


def take(request: Request) -> str | None:
    """The message waiting for this login, cleared as it is read (a reload no longer shows it)."""
    sid = request.session.get(SESSION_ID)
    if not sid:
        return None
    with app_state(request).store.session() as s:
        return take_flash(s, str(sid))
