"""Policy sections about *when* I/O happens and what it costs flash (issue #9):

- `maintenance_windows` and `burst_detection`: I/O that is maintenance (backups, DBCC CHECKDB,
  index maintenance, ETL loads) is left out of heat and shown separately;
- `endurance`: how much of the flash tier's daily write budget (`endurance_dwpd` on the tier ×
  its capacity) one object, and the whole placement, may use;
- `business_calendar`: recurring periods (month-end, quarter-end, year-end, seasons) whose heat
  is judged on its own, so a partition re-read every month-end is not demoted in between.

Times are wall-clock times in the window's time zone; the advisors compare them with the data's
own timestamps, never with the clock.
"""

from __future__ import annotations

from datetime import date, time
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _parse_clock(v: object) -> object:
    """'HH:MM' (quoted in YAML). Unquoted, YAML 1.1 reads 01:30 as the number 90 (base 60):
    that is minutes since midnight, so it is taken as such."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        if not 0 <= v < 24 * 60:
            raise ValueError("write the time as 'HH:MM' in quotes")
        return time(v // 60, v % 60)
    return v


def _check_zone(v: str) -> str:
    try:
        ZoneInfo(v)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {v!r} (use an IANA name such as 'UTC' or 'Europe/Paris')"
        ) from None
    return v


class WeeklyTimes(_Strict):
    """Start and end as wall-clock times in `time_zone` (shared by maintenance and change windows)."""

    start: time
    end: time
    time_zone: str = "UTC"

    @field_validator("start", "end", mode="before")
    @classmethod
    def _clock(cls, v: object) -> object:
        return _parse_clock(v)

    @field_validator("time_zone")
    @classmethod
    def _tz(cls, v: str) -> str:
        return _check_zone(v)


class MaintenanceWindow(WeeklyTimes):
    """A recurring window whose I/O is maintenance, not workload: e.g. the nightly full backup.
    `end` before `start` crosses midnight (22:00-02:00); `days` are the days the window starts."""

    name: str = Field(min_length=1, max_length=80)
    kind: Literal["backup", "dbcc", "index", "etl"]
    days: list[Weekday] = Field(default_factory=lambda: list(WEEKDAYS), min_length=1)
    start: time
    end: time
    time_zone: str = "UTC"
    database: list[str] | None = None  # shell patterns, case-insensitive; None: every database
    objects: list[str] | None = None  # shell patterns on the object's name or key; None: all

    @field_validator("database", "objects", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _not_empty(self) -> MaintenanceWindow:
        if self.start == self.end:
            raise ValueError("start and end are the same time: the window would be empty")
        return self


class BurstDetection(_Strict):
    """Hours whose reads are very large and sequential (backup reads are up to 1-4 MB each, ordinary
    read-ahead at most ~1 MB; domain.md §2) are maintenance even when no window is declared."""

    enabled: bool = True
    min_avg_read_bytes: int = Field(default=512 * 1024, gt=0, description="average read in the hour")
    min_reads: int = Field(default=100, ge=1, description="reads the hour needs to count as a burst")
    min_prefetch_share: float = Field(
        default=0.8, ge=0, le=1, description="DB2: prefetched share of physical reads, where known"
    )


class EndurancePolicy(_Strict):
    """Flash wears with writes: a tier's daily write budget is its `endurance_dwpd` × `capacity_gb`
    (host writes; lower the DWPD to allow for RAID parity writes). The placement keeps the writes of
    everything it puts on the tier within `tier_max_budget_share` of it."""

    tier_max_budget_share: float = Field(
        default=1.0, gt=0, le=2, description="share of the daily write budget the placement may use"
    )


class CalendarPeriod(_Strict):
    """A recurring business period. month_end / quarter_end / year_end: the last `last_days` days
    of the month (of the quarter's last month, of December) and the first `first_days` of the next;
    custom: `start`-`end` as 'MM-DD', every year (may cross the year's end)."""

    name: str = Field(min_length=1, max_length=80)
    kind: Literal["month_end", "quarter_end", "year_end", "custom"]
    last_days: int = Field(default=3, ge=0, le=27)
    first_days: int = Field(default=1, ge=0, le=27)
    start: str | None = Field(default=None, pattern=r"^\d{2}-\d{2}$")
    end: str | None = Field(default=None, pattern=r"^\d{2}-\d{2}$")
    time_zone: str = "UTC"
    hot_min_ratio: float = Field(
        default=3.0, gt=1, description="I/O rate in the period vs the other days that makes it hot"
    )

    @field_validator("time_zone")
    @classmethod
    def _tz(cls, v: str) -> str:
        return _check_zone(v)

    @field_validator("start", "end")
    @classmethod
    def _month_day(cls, v: str | None) -> str | None:
        if v is not None:
            month, day = (int(x) for x in v.split("-"))
            try:
                date(2000, month, day)  # a leap year: 02-29 is a valid recurring day
            except ValueError:
                raise ValueError(f"{v!r} is not a month-day 'MM-DD'") from None
        return v

    @model_validator(mode="after")
    def _shape(self) -> CalendarPeriod:
        if self.kind == "custom" and (self.start is None or self.end is None):
            raise ValueError("a custom period needs start and end ('MM-DD')")
        if self.kind != "custom" and (self.start is not None or self.end is not None):
            raise ValueError(
                f"start/end are for custom periods; a {self.kind} period uses last_days/first_days"
            )
        if self.kind != "custom" and self.last_days + self.first_days == 0:
            raise ValueError("last_days and first_days are both 0: the period would be empty")
        return self
