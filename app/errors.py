"""The service's error vocabulary: what went wrong with a request, independent of how it is answered.

Services and the store raise these (or their own subclasses of them, which say more); app/main.py
turns each into its HTTP status, as JSON for /api and JSON clients and as an error page for a
browser. Routes therefore call the service and never pick a status code for a domain error.
A class deriving from two of these lists the more specific one first (its `status_code` and the
handler follow the method resolution order)."""

from __future__ import annotations


class TierwiseError(Exception):
    """Something the request asked for that cannot be done; the message says why, for the caller."""

    status_code = 400

    @property
    def detail(self) -> str:
        """The message a caller sees (subclasses may add the field it is about)."""
        return str(self)


class NotFound(TierwiseError, LookupError):
    """The thing the request names does not exist (404)."""

    status_code = 404


class Conflict(TierwiseError):
    """The thing exists, but its state does not allow what was asked (409)."""

    status_code = 409


class Invalid(TierwiseError, ValueError):
    """A value in the request the service cannot take (422)."""

    status_code = 422


class StoreBusy(TierwiseError):
    """The store is locked or busy (SQLite "database is locked" behind a long writer, PostgreSQL
    lock or statement timeout, serialization failure, deadlock, a lost connection): the same
    request may succeed in a few seconds. Answered 503 with Retry-After, never 500."""

    status_code = 503
    retry_after_s = 5

    def __init__(self) -> None:
        super().__init__(
            "The store is busy (another writer holds it, such as a large import or the hourly "
            f"roll-up): nothing was changed; try again in {self.retry_after_s} seconds."
        )
