"""Reading a policy file: YAML in, a validated Policy out, errors that name the field."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from policies.model import Policy

DEFAULT_POLICY = Path(__file__).with_name("default.yaml")


class PolicyError(Exception):
    pass


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse_policy(text: str, *, source: str) -> Policy:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise PolicyError(f"{source}{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{source}: a policy is a mapping with at least `tiers:`")
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        lines = [f"{source}: {_where(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()]
        raise PolicyError("\n".join(lines)) from None


def load_policy(path: str | Path | None = None) -> Policy:
    """The policy in `path`, or the shipped default when no file is given."""
    p = Path(path) if path is not None else DEFAULT_POLICY
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"{p}: cannot read policy file ({exc.strerror})") from None
    return parse_policy(text, source=str(p))
