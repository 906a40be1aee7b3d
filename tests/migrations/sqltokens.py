"""Test-side lexers for the generated scripts: strip every quoted identifier, string literal and
comment, leaving the skeleton of statements the generator meant to write.

Written independently of migrations/quoting.py on purpose (a bug there must not hide here).

T-SQL: [ident]] with ]] ], "ident"" with "" ", 'text'' with '' ' (N prefix stays in the skeleton),
-- to end of line, /* … */ nesting. DB2: "ident"" ", 'text'' ', -- to end of line; the literal
after EXECUTE IMMEDIATE is SQL itself, so it is skeletonised recursively instead of blanked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class LexError(ValueError):
    pass


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "string", "comment", "code"
    text: str  # as written
    value: str = ""  # unescaped content for ident/string


def _quoted(text: str, i: int, close: str) -> tuple[int, str]:
    """From the character after an opening quote: (index after the closing quote, content)."""
    out: list[str] = []
    while True:
        j = text.find(close, i)
        if j < 0:
            raise LexError(
                f"unterminated {close}-quoted token starting near {text[max(0, i - 20) : i + 20]!r}"
            )
        out.append(text[i:j])
        if text.startswith(close * 2, j):
            out.append(close)
            i = j + 2
            continue
        return j + 1, "".join(out)


def tsql_tokens(text: str) -> list[Token]:
    tokens: list[Token] = []
    code: list[str] = []
    i, n = 0, len(text)

    def flush() -> None:
        if code:
            tokens.append(Token("code", "".join(code)))
            code.clear()

    while i < n:
        ch = text[i]
        if ch == "[":
            flush()
            end, value = _quoted(text, i + 1, "]")
            tokens.append(Token("ident", text[i:end], value))
            i = end
        elif ch == '"':
            flush()
            end, value = _quoted(text, i + 1, '"')
            tokens.append(Token("ident", text[i:end], value))
            i = end
        elif ch == "'":
            flush()
            end, value = _quoted(text, i + 1, "'")
            tokens.append(Token("string", text[i:end], value))
            i = end
        elif text.startswith("--", i):
            flush()
            end = text.find("\n", i)
            end = n if end < 0 else end
            tokens.append(Token("comment", text[i:end]))
            i = end
        elif text.startswith("/*", i):
            flush()
            depth, j = 1, i + 2
            while depth:
                if j >= n:
                    raise LexError("unterminated /* comment")
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            tokens.append(Token("comment", text[i:j]))
            i = j
        else:
            code.append(ch)
            i += 1
    flush()
    return tokens


def tsql_skeleton(text: str) -> str:
    parts: list[str] = []
    for t in tsql_tokens(text):
        if t.kind == "ident":
            parts.append("[?]")
        elif t.kind == "string":
            parts.append("'?'")
        elif t.kind == "code":
            parts.append(t.text)
    return _squeeze("".join(parts))


def _squeeze(s: str) -> str:
    # comments leave blank lines / trailing spaces behind; they are not structure
    return "\n".join(line.rstrip() for line in s.split("\n") if line.strip())


_EXECUTE_IMMEDIATE = re.compile(r"EXECUTE\s+IMMEDIATE\s*$", re.IGNORECASE)


def db2_tokens(text: str) -> list[Token]:
    tokens: list[Token] = []
    code: list[str] = []
    i, n = 0, len(text)

    def flush() -> None:
        if code:
            tokens.append(Token("code", "".join(code)))
            code.clear()

    while i < n:
        ch = text[i]
        if ch == '"':
            flush()
            end, value = _quoted(text, i + 1, '"')
            tokens.append(Token("ident", text[i:end], value))
            i = end
        elif ch == "'":
            flush()
            end, value = _quoted(text, i + 1, "'")
            tokens.append(Token("string", text[i:end], value))
            i = end
        elif text.startswith("--", i):
            flush()
            end = text.find("\n", i)
            end = n if end < 0 else end
            tokens.append(Token("comment", text[i:end]))
            i = end
        else:
            code.append(ch)
            i += 1
    flush()
    return tokens


def db2_skeleton(text: str) -> str:
    parts: list[str] = []
    for t in db2_tokens(text):
        if t.kind == "ident":
            parts.append('"?"')
        elif t.kind == "string":
            before = parts[-1] if parts else ""
            if _EXECUTE_IMMEDIATE.search(before):
                parts.append("'<<" + db2_skeleton(t.value) + ">>'")
            else:
                parts.append("'?'")
        elif t.kind == "code":
            parts.append(t.text)
    return _squeeze("".join(parts))


# ---------------------------------------------------------------------------------------------
# client-tool views


def tsql_batches(text: str) -> list[str]:
    """What sqlcmd sends: split on lines holding only GO; sqlcmd command lines (:…) removed."""
    batches: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.strip().upper() == "GO":
            batches.append([])
        elif line.lstrip().startswith(":"):
            batches[-1].append("")
        else:
            batches[-1].append(line)
    return ["\n".join(b) for b in batches if "\n".join(b).strip()]


def tool_lines(text: str) -> dict[str, list[str]]:
    """Lines a client tool acts on whatever the quoting: GO, sqlcmd commands, CLP directives."""
    lines = text.split("\n")
    return {
        "go": [ln for ln in lines if re.fullmatch(r"\s*GO(\s+\d+)?\s*", ln, re.IGNORECASE)],
        "sqlcmd": [ln for ln in lines if ln.lstrip().startswith((":", "!!"))],
        "variables": re.findall(r"\$\([^)]*\)?", text),
        "directives": [ln for ln in lines if ln.lstrip().startswith("--#")],
    }


def db2_statements(text: str, terminator: str = "@") -> list[str]:
    """Statements as the CLP splits them: comment lines dropped, then on the terminator outside
    quotes (stricter than the CLP, which only looks at line ends)."""
    body = "\n".join(ln for ln in text.split("\n") if not ln.lstrip().startswith("--"))
    out: list[str] = []
    cur: list[str] = []
    for t in db2_tokens(body):
        if t.kind != "code":
            cur.append(t.text)
            continue
        pieces = t.text.split(terminator)
        for k, piece in enumerate(pieces):
            cur.append(piece)
            if k < len(pieces) - 1:
                out.append("".join(cur).strip())
                cur = []
    rest = "".join(cur).strip()
    if rest:
        raise LexError(f"text after the last terminator: {rest[:80]!r}")
    return [s for s in out if s]
