"""The benefit model: the I/O wait a placement unit would have on each tier.

One figure decides where data goes (design.md, "Benefit decides"): I/O wait in ms per second,
reads x read latency + writes x write latency. Where the unit is now, the measured latencies are
used as they are. On any other tier the latency is predicted from how the tiers differ physically:

- a random read that misses the array cache costs the tier's positioning time plus the transfer
  of its bytes; one the array cache serves costs `array_cache_hit_ms`, whatever the tier;
- a sequential read (DB2 prefetch, SQL Server read-ahead) pays only a share of the positioning
  time on disks (`incurs_seek_penalty`), all of it on flash, plus the transfer: so flash saves
  little per sequential read, and the model, not a rule, keeps scans off it;
- a write lands in the array's write cache: the tier's write latency plus the transfer beyond 8 KB;
- on a slower tier, what makes a unit slower than its current tier's model today (its own
  bursts, a busy path) goes with it: a cheaper tier will not cure it;
- reads queue as a tier fills: the positioning and transfer times are multiplied by 1 / (1 - U),
  U = the back-end IOPS placed on the tier / what its devices serve (capped);
- a prefetch stream queues behind its own requests: the part of a sequential read's measured
  latency above its tier's model moves with the unit, so flash saves a scan only what its faster
  transfer and positioning save;
- sequential reads count in the I/O wait at `sequential_wait_share` of their latency (1 by
  default: as the engines' stall counters count them; lower it where read-ahead overlaps work);
- the part of a stall SQL Server reports as Resource Governor queueing (`io_stall_queued_read_ms`,
  `io_stall_queued_write_ms`: time between an I/O's arrival and its issue, held back by the pool's
  MAX_IOPS_PER_VOLUME) is taken out of the measured latency the model reads the tier from, and
  added back on every tier alike: a pool's cap goes with the unit, and no tier lifts it.

Back-end I/O by access pattern: a random write pays the RAID write penalty (`raid_factor`: read
data and parity, write both), a sequential write the array gathers into full stripes pays the data
plus the parity of a full stripe (`Tier.full_stripe_write_factor`: n / (n - parity drives)); logs,
large writes (bulk loads) and units whose reads are mostly prefetch are taken as sequential writers.

A tier's `read_latency_ms` is the service time of one random 8 KB read at light load, so its
positioning time is that minus the transfer of 8 KB. The array-cache hit share of a unit's
random reads is what makes its measured latency on its current tier fit that tier's model (disk
tiers only: a flash read faster than flash's quoted service time is flash, not the array cache).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from advisors.features import DB2_P_READS, GOVERNOR_READ, GOVERNOR_WRITE, Usage, governor_per_io
from policies.model import Classification, Policy

PAGE = 8192  # bytes of the random read a tier's read_latency_ms is quoted for
SECTOR = 512  # DB2 direct reads are counted in 512-byte sectors
MB = 2**20
PREFETCH_REQUESTS = ("vectored_ios", "block_ios")
PREFETCH_PAGES = ("pages_from_vectored_ios", "pages_from_block_ios")


def _n(v: int | None) -> int:
    return v or 0


def _share(size: float, low: float, high: float) -> float:
    """Where `size` falls between a random-sized and a sequential-sized request, 0 to 1."""
    return min(max((size - low) / (high - low), 0.0), 1.0) if high > low else float(size >= high)


@dataclass(frozen=True, slots=True)
class IoMix:
    """A unit's I/O over one window, split where the tiers' physics differ (rates per second)."""

    seconds: float
    random_reads: float
    random_read_bytes: float
    sequential_reads: float
    sequential_read_bytes: float
    writes: float
    write_bytes: float
    read_ms: float | None  # measured average read latency where the unit is now
    write_ms: float | None
    # measured apart where the engine times them apart (DB2: synchronous vs prefetch reads)
    random_read_ms: float | None = None
    sequential_read_ms: float | None = None
    # Resource Governor queueing per read / write (already out of read_ms and write_ms)
    governor_read_ms: float = 0.0
    governor_write_ms: float = 0.0
    sequential_write_share: float = 0.0  # writes the array can gather into full stripes

    @property
    def reads(self) -> float:
        return self.random_reads + self.sequential_reads

    @property
    def io(self) -> float:
        return self.reads + self.writes

    @property
    def sequential_share(self) -> float:
        return self.sequential_reads / self.reads if self.reads else 0.0

    @property
    def write_gb_day(self) -> float:
        return self.writes * self.write_bytes * 86_400 / 2**30


def governor_ms(usage: Usage) -> tuple[float, float]:
    """Resource Governor queueing per read and per write (0 where the engine reports none)."""
    c, x = usage.counters, usage.extra
    reads, writes = _n(c.get("reads")), _n(c.get("writes"))
    return (
        governor_per_io(x.get(GOVERNOR_READ), c.get("read_time_ms"), reads) or 0.0,
        governor_per_io(x.get(GOVERNOR_WRITE), c.get("write_time_ms"), writes) or 0.0,
    )


def io_mix(usage: Usage, rules: Classification, *, log: bool = False) -> IoMix | None:
    """The mix of one window (None: no covered seconds). DB2 table spaces count their prefetch
    requests (VECTORED_IOS + BLOCK_IOS); SQL Server shows only the average read size, read as a mix
    of random reads up to `random_max_read_bytes` and read-ahead, all sequential from
    `sequential_min_read_bytes` on. Resource Governor queueing is taken out of the measured
    latencies (`governor_ms`). `log`: a transaction log, whose writes are sequential appends."""
    if usage.seconds <= 0:
        return None
    c, x = usage.counters, usage.extra
    secs = usage.seconds
    reads, writes = _n(c.get("reads")), _n(c.get("writes"))
    bytes_read, bytes_written = c.get("bytes_read"), c.get("bytes_written")
    avg_read = bytes_read / reads if bytes_read and reads else float(PAGE)
    avg_write = bytes_written / writes if bytes_written and writes else float(PAGE)
    gov_r, gov_w = governor_ms(usage)
    stall_r, stall_w = c.get("read_time_ms"), c.get("write_time_ms")
    # what storage answered: the stall less the governor's queue
    read_time = None if stall_r is None else stall_r - gov_r * reads
    write_time = None if stall_w is None else stall_w - gov_w * writes
    split: tuple[float | None, float | None] = (None, None)
    if any(k in x for k in PREFETCH_REQUESTS) and reads:
        seq = float(min(sum(x.get(k, 0) for k in PREFETCH_REQUESTS), reads))
        if read_time is not None and "pool_async_read_time" in x and seq and reads > seq:
            async_ms = x["pool_async_read_time"]
            split = ((read_time - async_ms) / (reads - seq), async_ms / seq)
        p_reads = sum(x.get(k, 0) for k in DB2_P_READS)
        pool_bytes = _n(bytes_read) - x.get("direct_reads", 0) * SECTOR
        page = pool_bytes / p_reads if p_reads and pool_bytes > 0 else float(PAGE)
        seq_bytes_total = sum(x.get(k, 0) for k in PREFETCH_PAGES) * page
        rand = reads - seq
        seq_bytes = seq_bytes_total / seq if seq else page
        rand_bytes = max((_n(bytes_read) - seq_bytes_total) / rand, float(SECTOR)) if rand else page
    else:
        share = _share(avg_read, rules.random_max_read_bytes, rules.sequential_min_read_bytes)
        rand_bytes = min(avg_read, float(rules.random_max_read_bytes))
        seq = reads * share
        rand = reads - seq
        seq_bytes = (
            (avg_read - (1 - share) * rand_bytes) / share if share else float(rules.sequential_min_read_bytes)
        )
    prefetched = seq / reads if reads else 0.0
    seq_writes = max(
        1.0 if log else 0.0,  # a log appends
        _share(avg_write, rules.random_max_read_bytes, rules.sequential_min_read_bytes),  # bulk loads
        prefetched if prefetched >= rules.sequential_min_prefetch_share else 0.0,  # loaded as it is scanned
    )
    return IoMix(
        seconds=secs,
        random_reads=rand / secs,
        random_read_bytes=rand_bytes,
        sequential_reads=seq / secs,
        sequential_read_bytes=seq_bytes,
        writes=writes / secs,
        write_bytes=avg_write,
        read_ms=read_time / reads if read_time is not None and reads else None,
        write_ms=write_time / writes if write_time is not None and writes else None,
        random_read_ms=None if split[0] is None else max(split[0], 0.0),
        sequential_read_ms=split[1],
        governor_read_ms=gov_r,
        governor_write_ms=gov_w,
        sequential_write_share=seq_writes if writes else 0.0,
    )


@dataclass(frozen=True, slots=True)
class TierPhysics:
    """What one tier costs per I/O, from the policy."""

    name: str
    rank: int  # 0 for the fastest tier
    positioning_ms: float
    transfer_mb_s: float
    seeks: bool
    write_latency_ms: float
    raid_factor: int
    full_stripe_factor: float  # back-end writes per host write gathered into full stripes
    max_iops: float
    price_ms_per_gb: float  # the tier's cost_per_gb in I/O-wait terms (benefit.price_weight)
    sequential_positioning_share: float

    def transfer_ms(self, size: float) -> float:
        return size / (self.transfer_mb_s * MB) * 1000

    def random_miss_ms(self, size: float) -> float:
        return self.positioning_ms + self.transfer_ms(size)

    def sequential_ms(self, size: float) -> float:
        share = self.sequential_positioning_share if self.seeks else 1.0
        return self.positioning_ms * share + self.transfer_ms(size)

    def write_ms(self, size: float) -> float:
        return self.write_latency_ms + self.transfer_ms(max(size - PAGE, 0.0))


def physics(
    policy: Policy, figures: Mapping[str, tuple[float, float]] | None = None
) -> dict[str, TierPhysics]:
    """Each tier's costs per I/O. `figures`: tier -> (read ms of 8 KB at light load, write ms) to
    take instead of the policy's `read_latency_ms` / `write_latency_ms` (advisors.tier_curves)."""
    b = policy.benefit
    out: dict[str, TierPhysics] = {}
    for rank, t in enumerate(policy.tiers):
        rate = t.transfer_rate_mb_s
        read_ms, write_ms = (figures or {}).get(t.name, (t.read_latency_ms, t.write_latency_ms))
        out[t.name] = TierPhysics(
            name=t.name,
            rank=rank,
            positioning_ms=max(read_ms - PAGE / (rate * MB) * 1000, 0.0),
            transfer_mb_s=rate,
            seeks=t.seeks,
            write_latency_ms=write_ms,
            raid_factor=t.raid_factor,
            full_stripe_factor=t.full_stripe_write_factor,
            max_iops=t.max_iops,
            price_ms_per_gb=b.price_weight * t.cost_per_gb,
            sequential_positioning_share=b.sequential_positioning_share,
        )
    return out


def array_cache_hits(mix: IoMix, tier: TierPhysics, hit_ms: float) -> float:
    """Share of the random reads the array cache served: what makes the measured random-read
    latency on the unit's current tier fit that tier's model (0 without a measurement). Where the
    engine does not time random reads apart, the sequential reads are taken at the model's time."""
    if mix.random_reads <= 0 or (mix.read_ms is None and mix.random_read_ms is None) or not tier.seeks:
        return 0.0  # a flash read faster than its quoted service time is flash, not the array cache
    miss = tier.random_miss_ms(mix.random_read_bytes)
    if miss <= hit_ms:
        return 0.0
    random_ms = mix.random_read_ms
    if random_ms is None:
        assert mix.read_ms is not None
        seq_ms = tier.sequential_ms(mix.sequential_read_bytes)
        random_ms = (mix.read_ms * mix.reads - mix.sequential_reads * seq_ms) / mix.random_reads
    return min(max((miss - random_ms) / (miss - hit_ms), 0.0), 1.0)


def measured_split(
    mix: IoMix, tier: TierPhysics, hit_share: float, hit_ms: float
) -> tuple[float, float] | None:
    """(random, sequential) read latency measured where the unit is: as the engine times them, or
    the measured average shared out in the proportions of the current tier's model."""
    if mix.random_read_ms is not None and mix.sequential_read_ms is not None:
        return mix.random_read_ms, mix.sequential_read_ms
    if mix.read_ms is None or not mix.reads:
        return None
    model_random = hit_share * hit_ms + (1 - hit_share) * tier.random_miss_ms(mix.random_read_bytes)
    model_seq = tier.sequential_ms(mix.sequential_read_bytes)
    model = (mix.random_reads * model_random + mix.sequential_reads * model_seq) / mix.reads
    k = mix.read_ms / model if model > 0 else 1.0
    return model_random * k, model_seq * k


@dataclass(frozen=True, slots=True)
class TierWait:
    tier: str
    read_ms: float | None  # average per read (None: no reads)
    write_ms: float | None
    wait_ms_per_s: float
    measured: bool  # the current tier's measured latencies, not the model
    # wait_ms_per_s is the I/O wait sessions see: sequential reads at sequential_wait_share
    backend_iops: float  # reads the array cache misses + writes x their pattern's write factor
    governor_ms_per_s: float = 0.0  # of wait_ms_per_s: Resource Governor queueing, the same on every tier


def write_factor(mix: IoMix, tier: TierPhysics) -> float:
    """Back-end I/Os per host write on a tier: random writes pay the RAID write penalty (read data
    and parity, write both: 4 on RAID 5, 6 on RAID 6, 2 mirrored), sequential ones gathered into
    full stripes the data plus the stripe's parity (n / (n - parity drives); 2 mirrored)."""
    s = mix.sequential_write_share
    return (1 - s) * tier.raid_factor + s * min(tier.full_stripe_factor, tier.raid_factor)


def backend_iops(mix: IoMix, tier: TierPhysics, hit_share: float) -> float:
    return mix.random_reads * (1 - hit_share) + mix.sequential_reads + mix.writes * write_factor(mix, tier)


def queue_factor(utilisation: float, cap: float) -> float:
    return 1.0 / (1.0 - min(max(utilisation, 0.0), cap))


def wait_on(
    mix: IoMix,
    tier: TierPhysics,
    *,
    current: TierPhysics | None,
    hit_share: float,
    utilisation: float,
    policy: Policy,
) -> TierWait:
    """The unit's I/O wait on one tier: measured where it is now (`current`, when the counters give
    latencies), predicted elsewhere. A sequential read elsewhere costs what it measures now plus the
    difference of the two tiers' models: a prefetch stream queues behind its own requests, and that
    goes with it; what changes is the transfer and positioning. On a slower tier the random reads and
    writes carry their excess over the current tier's model too. Sequential reads count at
    `sequential_wait_share` of their latency. Resource Governor queueing is added on every tier
    alike: the pool's cap, not the storage, holds those I/Os back."""
    b = policy.benefit
    q = queue_factor(utilisation, b.max_queue_utilisation)
    random_ms = (
        hit_share * b.array_cache_hit_ms + (1 - hit_share) * tier.random_miss_ms(mix.random_read_bytes) * q
    )
    seq_ms = tier.sequential_ms(mix.sequential_read_bytes) * q
    write_ms = tier.write_ms(mix.write_bytes) if mix.writes else None
    has_latency = (mix.read_ms is not None or not mix.reads) and (mix.write_ms is not None or not mix.writes)
    measured = current is not None and current.name == tier.name and has_latency
    split = None
    if current is not None and has_latency:
        split = measured_split(mix, current, hit_share, b.array_cache_hit_ms)
    if measured:
        if split is not None:
            random_ms, seq_ms = split
        write_ms = mix.write_ms
    elif split is not None and current is not None:
        own_queue = max(split[1] - current.sequential_ms(mix.sequential_read_bytes), 0.0)
        seq_ms += own_queue
        if tier.rank > current.rank:  # whatever makes it slower than its tier today goes with it
            here = hit_share * b.array_cache_hit_ms + (1 - hit_share) * current.random_miss_ms(
                mix.random_read_bytes
            )
            random_ms += max(split[0] - here, 0.0)
            if write_ms is not None and mix.write_ms is not None:
                write_ms += max(mix.write_ms - current.write_ms(mix.write_bytes), 0.0)
    read_ms = (
        (mix.random_reads * random_ms + mix.sequential_reads * seq_ms) / mix.reads if mix.reads else None
    )
    governor = mix.reads * mix.governor_read_ms + mix.writes * mix.governor_write_ms
    wait = (
        mix.random_reads * random_ms
        + mix.sequential_reads * seq_ms * b.sequential_wait_share
        + mix.writes * (write_ms or 0.0)
        + governor
    )
    if read_ms is not None:
        read_ms += mix.governor_read_ms
    if write_ms is not None:
        write_ms += mix.governor_write_ms
    return TierWait(
        tier.name, read_ms, write_ms, wait, measured, backend_iops(mix, tier, hit_share), governor
    )


def utilisation(loads: Iterable[tuple[str, float]], tiers: Mapping[str, TierPhysics]) -> dict[str, float]:
    """Each tier's back-end load / what its devices serve, from (tier, back-end IOPS) pairs."""
    used = dict.fromkeys(tiers, 0.0)
    for name, iops in loads:
        if name in used:
            used[name] += iops
    return {n: used[n] / tiers[n].max_iops if tiers[n].max_iops > 0 else 0.0 for n in tiers}
