"""Store schema: targets, objects, raw samples, interval deltas and hourly roll-ups.

Schema versions are Alembic revisions under app/store/alembic/versions; this module is the
source they were generated from and must stay in step with them (a test compares the two).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from connectors.records import CORE_COUNTERS

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Stores UTC instants; returns timezone-aware UTC datetimes on every back-end (SQLite has no tz)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; pass an aware UTC datetime")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime()}


COUNTER_COLUMNS = CORE_COUNTERS


class Target(Base):
    """An instance to poll, or the origin of imported files."""

    __tablename__ = "target"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    engine: Mapped[str] = mapped_column(String(20))  # sqlserver | db2
    source: Mapped[str] = mapped_column(String(20))  # live | import | simulator
    connection_encrypted: Mapped[str | None] = mapped_column(Text, default=None)
    password_env: Mapped[str | None] = mapped_column(String(200), default=None)
    poll_interval_s: Mapped[int] = mapped_column(Integer, default=300)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime]
    last_poll_at: Mapped[datetime | None] = mapped_column(default=None)
    last_success_at: Mapped[datetime | None] = mapped_column(default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    last_error_at: Mapped[datetime | None] = mapped_column(default=None)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    # a collector worker's claim on this target's due poll (lease expiry frees a dead worker's claim)
    lease_owner: Mapped[str | None] = mapped_column(String(200), default=None)
    lease_until: Mapped[datetime | None] = mapped_column(default=None)


class DbObject(Base):
    """A file, filegroup, partition, table space, log or tempdb file, with its current location.

    On PostgreSQL the table is kept half full (fillfactor 50, schema version 0016): every poll
    moves each object's `last_seen`, and with room on its page that update is HOT (no index
    entry rewritten): ~4x cheaper in the ingest statement (docs/large-fleet.md, bench.collectors)."""

    __tablename__ = "object"
    __table_args__ = (UniqueConstraint("target_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("target.id", ondelete="CASCADE"), index=True)
    engine: Mapped[str] = mapped_column(String(20))
    server: Mapped[str] = mapped_column(String(256))
    database: Mapped[str] = mapped_column(String(256))
    kind: Mapped[str] = mapped_column(String(20))
    key: Mapped[str] = mapped_column(String(1200))
    name: Mapped[str] = mapped_column(String(600))
    size_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    logical_name: Mapped[str | None] = mapped_column(String(256), default=None)
    physical_name: Mapped[str | None] = mapped_column(String(1024), default=None)
    file_id: Mapped[int | None] = mapped_column(Integer, default=None)
    filegroup: Mapped[str | None] = mapped_column(String(256), default=None)
    storage_group: Mapped[str | None] = mapped_column(String(256), default=None)
    tablespace: Mapped[str | None] = mapped_column(String(256), default=None)
    table_name: Mapped[str | None] = mapped_column(String(600), default=None)
    # the schema of a partition's table on its own (table_name is "schema.table"; either name may
    # contain "."); None for objects stored before it was collected
    schema_name: Mapped[str | None] = mapped_column(String(256), default=None)
    partition_number: Mapped[int | None] = mapped_column(Integer, default=None)
    partition_scheme: Mapped[str | None] = mapped_column(String(256), default=None)
    partition_function: Mapped[str | None] = mapped_column(String(256), default=None)
    range_low: Mapped[str | None] = mapped_column(String(600), default=None)
    range_high: Mapped[str | None] = mapped_column(String(600), default=None)
    range_right: Mapped[bool | None] = mapped_column(Boolean, default=None)
    low_inclusive: Mapped[bool | None] = mapped_column(Boolean, default=None)
    high_inclusive: Mapped[bool | None] = mapped_column(Boolean, default=None)
    rows: Mapped[int | None] = mapped_column(BigInteger, default=None)
    current_tier: Mapped[str | None] = mapped_column(String(40), default=None)
    first_seen: Mapped[datetime]
    last_seen: Mapped[datetime]
    # when its placement (file path, filegroup, table space, storage group) last changed, and from what
    location_since: Mapped[datetime | None] = mapped_column(default=None)
    previous_location: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)


class Sample(Base):
    """One object's cumulative counters at one poll (raw; kept sample_retention_days).

    No foreign key to object: its check cost ~30 % of each ingest statement (docs/large-fleet.md).
    The ingest writes samples only for objects it read or created in the same transaction, with
    the objects' targets held (`FOR KEY SHARE`), and deleting objects deletes their samples and
    intervals by trigger (schema version 0016), as ON DELETE CASCADE did."""

    __tablename__ = "sample"
    __table_args__ = (UniqueConstraint("object_id", "sample_time"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    object_id: Mapped[int] = mapped_column(Integer)  # object.id: see the class docstring
    sample_time: Mapped[datetime] = mapped_column(index=True)
    instance_start: Mapped[datetime | None] = mapped_column(default=None)
    size_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    reads: Mapped[int | None] = mapped_column(BigInteger, default=None)
    bytes_read: Mapped[int | None] = mapped_column(BigInteger, default=None)
    read_time_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    writes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    bytes_written: Mapped[int | None] = mapped_column(BigInteger, default=None)
    write_time_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class IoInterval(Base):
    """Deltas between two consecutive samples of one series (raw; kept sample_retention_days)."""

    __tablename__ = "io_interval"
    # ids only grow (AUTOINCREMENT on SQLite: a deleted highest id is never reused): the roll-up's
    # progress is the id of the last interval it added (RollupProgress)
    __table_args__ = (UniqueConstraint("object_id", "end_time"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    object_id: Mapped[int] = mapped_column(Integer)  # object.id, no foreign key: see Sample
    start_time: Mapped[datetime]
    end_time: Mapped[datetime] = mapped_column(index=True)
    seconds: Mapped[float] = mapped_column(Float)
    reads: Mapped[int | None] = mapped_column(BigInteger, default=None)
    bytes_read: Mapped[int | None] = mapped_column(BigInteger, default=None)
    read_time_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    writes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    bytes_written: Mapped[int | None] = mapped_column(BigInteger, default=None)
    write_time_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class HourlyRollup(Base):
    """Interval deltas summed per object per hour (by interval end); kept rollup_retention_days."""

    __tablename__ = "hourly_rollup"

    object_id: Mapped[int] = mapped_column(ForeignKey("object.id", ondelete="CASCADE"), primary_key=True)
    hour: Mapped[datetime] = mapped_column(primary_key=True, index=True)  # fleet-wide reads by time
    intervals: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    reads: Mapped[int | None] = mapped_column(BigInteger, default=None)
    bytes_read: Mapped[int | None] = mapped_column(BigInteger, default=None)
    read_time_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    writes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    bytes_written: Mapped[int | None] = mapped_column(BigInteger, default=None)
    write_time_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class RollupProgress(Base):
    """How far the hourly roll-up got: every interval with id <= last_interval_id is in its hour.

    Interval ids only grow, so an interval stored later (a late import of older samples included)
    has a higher id than any already rolled up and is added exactly once by the next roll-up.
    """

    __tablename__ = "rollup_progress"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)  # "hourly"
    last_interval_id: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[datetime | None] = mapped_column(default=None)


class ImportedFile(Base):
    """A file imported once: re-importing the same content is a no-op."""

    __tablename__ = "imported_file"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    path: Mapped[str] = mapped_column(String(2000))
    imported_at: Mapped[datetime]
    snapshots: Mapped[int] = mapped_column(Integer)
    samples: Mapped[int] = mapped_column(Integer)


class User(Base):
    """A local account; roles: viewer < approver < admin."""

    __tablename__ = "app_user"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(100), unique=True)
    password_hash: Mapped[str] = mapped_column(String(300))
    role: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime]
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)


class Recommendation(Base):
    """One piece of advice for one placement unit (filegroup, log, tempdb, table space) of a target.

    Re-evaluation updates an open recommendation in place while its target tier is unchanged;
    a different answer supersedes it, so what a DBA approved is never changed underneath them.
    """

    __tablename__ = "recommendation"
    __table_args__ = (Index("ix_recommendation_open", "target_id", "key", "status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("target.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(1200))
    engine: Mapped[str] = mapped_column(String(20))
    server: Mapped[str] = mapped_column(String(256))
    database: Mapped[str] = mapped_column(String(256))
    kind: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(600))
    from_tier: Mapped[str | None] = mapped_column(String(40), default=None)
    to_tier: Mapped[str] = mapped_column(String(40))
    profile: Mapped[str] = mapped_column(String(40))
    rule: Mapped[str] = mapped_column(String(20))
    size_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    io_ms_per_s_now: Mapped[float | None] = mapped_column(Float, default=None)
    io_ms_per_s_after: Mapped[float | None] = mapped_column(Float, default=None)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # the advice JSON object
    status: Mapped[str] = mapped_column(
        String(20), index=True
    )  # open approved rejected deferred executed superseded withdrawn
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    reviewed_by: Mapped[str | None] = mapped_column(String(100), default=None)
    reviewed_at: Mapped[datetime | None] = mapped_column(default=None)
    review_comment: Mapped[str | None] = mapped_column(Text, default=None)
    executed_by: Mapped[str | None] = mapped_column(String(100), default=None)
    executed_at: Mapped[datetime | None] = mapped_column(default=None)
    script_error: Mapped[str | None] = mapped_column(Text, default=None)  # why no script could be written


class AuditEvent(Base):
    """Who did what, when: review actions, logins, target and policy changes."""

    __tablename__ = "audit_event"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    at: Mapped[datetime] = mapped_column(index=True)
    username: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(40))
    subject_type: Mapped[str] = mapped_column(String(40))
    subject_id: Mapped[str | None] = mapped_column(String(200), default=None)
    summary: Mapped[str] = mapped_column(Text, default="")
    comment: Mapped[str | None] = mapped_column(Text, default=None)


class ApiToken(Base):
    """A bearer token for scripts and Prometheus; only its SHA-256 is stored."""

    __tablename__ = "api_token"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    user_id: Mapped[int] = mapped_column(ForeignKey("app_user.id", ondelete="CASCADE"), index=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


class PolicyVersion(Base):
    """The policy the service uses: the newest version wins; every edit is a new row (audited)."""

    __tablename__ = "policy_version"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    yaml_text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    created_by: Mapped[str] = mapped_column(String(100))
    comment: Mapped[str | None] = mapped_column(Text, default=None)


class ReportSubscription(Base):
    """A scheduled report email: who gets it, about what, and when (cron in a time zone)."""

    __tablename__ = "report_subscription"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    recipients: Mapped[str] = mapped_column(Text)  # comma-separated addresses
    scope: Mapped[str] = mapped_column(
        String(600), default="fleet"
    )  # fleet | target:NAME | database:TARGET/DB
    cron: Mapped[str] = mapped_column(String(120))  # five-field cron, e.g. "0 7 * * 1"
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    format: Mapped[str] = mapped_column(String(10), default="html", server_default="html")  # html | text
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime]
    last_run_at: Mapped[datetime | None] = mapped_column(default=None)


class Delivery(Base):
    """One attempt to deliver one report (scheduled or sent by hand), with its outcome."""

    __tablename__ = "delivery"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subscription_id: Mapped[int | None] = mapped_column(
        ForeignKey("report_subscription.id", ondelete="SET NULL"), default=None, index=True
    )
    at: Mapped[datetime] = mapped_column(index=True)
    recipients: Mapped[str] = mapped_column(Text)
    subject: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))  # pending | sent | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    message_id: Mapped[str | None] = mapped_column(String(300), default=None)
    # while pending: the message as sent (None: not composed yet); dropped once sent or failed
    message: Mapped[bytes | None] = mapped_column(LargeBinary, default=None, deferred=True)


class IlmPlanRecord(Base):
    """A stored ILM plan (re-evaluated daily) and how it differs from the previous one."""

    __tablename__ = "ilm_plan"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(index=True)
    plan: Mapped[dict[str, Any]] = mapped_column(JSON)
    changes: Mapped[list[Any]] = mapped_column(JSON, default=list)


class ScriptRecord(Base):
    """Generated script text for an approved recommendation, frozen at approval time."""

    __tablename__ = "script"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    recommendation_id: Mapped[int] = mapped_column(
        ForeignKey("recommendation.id", ondelete="CASCADE"), index=True
    )
    direction: Mapped[str] = mapped_column(String(10))  # forward | rollback
    dialect: Mapped[str] = mapped_column(String(10))  # tsql | db2
    filename: Mapped[str] = mapped_column(String(300))
    text: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    manual_step: Mapped[bool] = mapped_column(Boolean, default=False)
    restart_required: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime]


class AdviceSnapshot(Base):
    """The latest advice run for one target: every object's verdict and numbers, moved or not.

    Recommendations keep only moves; this keeps the evidence for the objects that were not picked
    and the "how much flash" curve per database.
    """

    __tablename__ = "advice_snapshot"

    target_id: Mapped[int] = mapped_column(ForeignKey("target.id", ondelete="CASCADE"), primary_key=True)
    evaluated_at: Mapped[datetime]
    objects: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)  # advice JSON, one per object
    flash_curve: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)  # per database
    notes: Mapped[list[str]] = mapped_column(JSON, default=list)
    # locations that match no tier of their pool, left out of the placement (advice JSON's unknown_locations)
    unknown_locations: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")


class Verification(Base):
    """A measured before/after comparison of one move (executed recommendation or a seen relocation)."""

    __tablename__ = "verification"
    # one verification per executed recommendation (two "executed" clicks never count one move twice)
    __table_args__ = (
        UniqueConstraint("target_id", "key", "changed_at"),
        UniqueConstraint("recommendation_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("target.id", ondelete="CASCADE"), index=True)
    recommendation_id: Mapped[int | None] = mapped_column(
        ForeignKey("recommendation.id", ondelete="SET NULL"), default=None, index=True
    )
    key: Mapped[str] = mapped_column(String(1200))
    name: Mapped[str] = mapped_column(String(600))
    trigger: Mapped[str] = mapped_column(String(20))  # executed | location_change
    changed_at: Mapped[datetime]
    from_tier: Mapped[str | None] = mapped_column(String(40), default=None)
    to_tier: Mapped[str | None] = mapped_column(String(40), default=None)
    window_days: Mapped[int] = mapped_column(Integer, default=7)
    status: Mapped[str] = mapped_column(String(20), index=True)  # waiting verified regressed inconclusive
    predicted_gain_ms_per_s: Mapped[float | None] = mapped_column(Float, default=None)
    achieved_gain_ms_per_s: Mapped[float | None] = mapped_column(Float, default=None)
    share_of_prediction: Mapped[float | None] = mapped_column(Float, default=None)
    confidence: Mapped[float | None] = mapped_column(Float, default=None)
    before: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    after: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    reasons: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime]
    evaluated_at: Mapped[datetime | None] = mapped_column(default=None)
    notified_at: Mapped[datetime | None] = mapped_column(default=None)  # regression notice sent in a report


class Suppression(Base):
    """A DBA's decision to hide advice for one object until it expires; lifted ones stay for the record."""

    __tablename__ = "suppression"
    __table_args__ = (Index("ix_suppression_target_key", "target_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("target.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(1200))
    name: Mapped[str] = mapped_column(String(600))
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    lifted_by: Mapped[str | None] = mapped_column(String(100), default=None)
    lifted_at: Mapped[datetime | None] = mapped_column(default=None)


class WebSession(Base):
    """A login of the web UI. The cookie holds only a random id; this row holds its SHA-256, so a stolen
    database gives no usable cookie, and deleting the row ends the login however many copies exist."""

    __tablename__ = "web_session"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    id_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("app_user.id", ondelete="CASCADE"), index=True)
    # the role at login, for the record only: each request reads the user's role afresh
    role_at_login: Mapped[str] = mapped_column(String(20))
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]
    expires_at: Mapped[datetime] = mapped_column(index=True)
    # a confirmation waiting for the next page, shown once (app/http/flash.py); never from the URL
    flash: Mapped[str | None] = mapped_column(Text, default=None)


class IngestWatermark(Base):
    """Whether a target's data changed since the advice last read it (app/store/watermarks.py).

    `version` counts the writes that stored samples of the target (polls, collector batches, import
    chunks); `imported_version` is the version an import last wrote; `advised_version` the version
    the last evaluation read. A counter, not a time, so hosts with different clocks agree."""

    __tablename__ = "ingest_watermark"

    target_id: Mapped[int] = mapped_column(ForeignKey("target.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger, default=0)
    imported_version: Mapped[int] = mapped_column(BigInteger, default=0)
    changed_at: Mapped[datetime]
    advised_version: Mapped[int] = mapped_column(BigInteger, default=0)
    advised_at: Mapped[datetime | None] = mapped_column(default=None)


class PoolWatermark(Base):
    """One storage pool's evaluation: what it last read and who evaluates it now
    (app/store/pool_marks in app/store/watermarks.py).

    `requested` counts the times the pool was found changed (its targets' data versions, its
    targets or the policy differ from what its last evaluation read); `done` is the request the
    last successful evaluation served, so the pool is due while `requested > done`. A worker takes
    a due pool with a lease (`lease_owner`, `lease_until`, `FOR UPDATE SKIP LOCKED` on PostgreSQL);
    a lease that expires is taken over. A failed evaluation is kept in `error` and retried after
    `retry_at`, without holding up the other pools."""

    __tablename__ = "pool_watermark"

    pool: Mapped[str] = mapped_column(String(200), primary_key=True)
    requested: Mapped[int] = mapped_column(BigInteger, default=0)
    done: Mapped[int] = mapped_column(BigInteger, default=0)
    targets: Mapped[list[int]] = mapped_column(JSON, default=list)  # the pool's targets at the request
    versions: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)  # target id -> version read
    policy_key: Mapped[str] = mapped_column(String(64), default="")  # the policy the last run used
    requested_at: Mapped[datetime | None] = mapped_column(default=None)
    advised_at: Mapped[datetime | None] = mapped_column(default=None)
    lease_owner: Mapped[str | None] = mapped_column(String(200), default=None)
    lease_until: Mapped[datetime | None] = mapped_column(default=None)
    retry_at: Mapped[datetime | None] = mapped_column(default=None)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    failed_at: Mapped[datetime | None] = mapped_column(default=None)
