"""A file attached to a report email, apart from the rendering so that the script generators'
edge (app.scripts) can hand files over without importing the report's content and charts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Attachment:
    filename: str
    content: bytes
    mime: str = "text/plain"
