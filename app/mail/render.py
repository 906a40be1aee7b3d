"""The report email: HTML and plain-text parts, charts inline by Content-ID, scripts attached."""

from __future__ import annotations

import io
import uuid
import zipfile
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.mail.attachment import Attachment
from app.mail.charts import skew_chart, tier_chart
from app.mail.content import NOTIFY_HEADER, ReportContent
from app.textfmt import filters
from connectors.records import escape_controls

_env = Environment(
    loader=FileSystemLoader(str(Path(__file__).parent / "templates")),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
ZIP_ABOVE = 6  # attach scripts one by one up to this many, zipped beyond


_env.filters.update(filters(missing="n/a"))  # the pages' filters; "n/a" reads better in plain text


def subject_for(content: ReportContent) -> str:
    """The Subject header's text. The scope's names are data: a control character a name may still
    hold (stored before names were checked) is written visibly, never as a line break; the email
    package folds and encodes the rest (RFC 2047) when the header is set."""
    c = content.counts
    return escape_controls(
        f"tierwise: {c['open']} open, {c['approved']} approved recommendations for {content.scope.label()}"
        f" ({content.generated_at:%Y-%m-%d})"
    )


def build_message(
    content: ReportContent,
    *,
    sender: str,
    recipients: Sequence[str],
    base_url: str,
    attachments: Sequence[Attachment] = (),
    fmt: str = "html",
) -> EmailMessage:
    """`fmt` "html": HTML with inline charts plus a plain-text part; "text": plain text only
    (for mail systems that strip HTML)."""
    msg = EmailMessage()
    msg["Subject"] = subject_for(content)
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg["Date"] = formatdate(content.generated_at.timestamp(), usegmt=True)
    message_id = make_msgid(domain="tierwise")
    msg["Message-ID"] = message_id
    if content.regressions:  # announced once: deliver() marks them notified when this message is sent
        msg[NOTIFY_HEADER] = ",".join(str(r.id) for r in content.regressions)
    # the charts' Content-IDs follow from the Message-ID: unique, and two renderings of one report
    # differ only in it
    skew_cid, tier_cid = (message_id.replace("<", f"<{chart}.", 1) for chart in ("skew", "tiers"))
    context = {
        "c": content,
        "base_url": base_url.rstrip("/"),
        "skew_cid": skew_cid[1:-1],
        "tier_cid": tier_cid[1:-1],
    }
    msg.set_content(_env.get_template("report.txt").render(**context))
    if fmt != "text":
        msg.add_alternative(_env.get_template("report.html").render(**context), subtype="html")
        html_part = msg.get_body(preferencelist=("html",))
        assert isinstance(html_part, EmailMessage)
        html_part.add_related(skew_chart(content), "image", "png", cid=skew_cid, filename="skew.png")
        html_part.add_related(tier_chart(content), "image", "png", cid=tier_cid, filename="tiers.png")
    if len(attachments) > ZIP_ABOVE:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for a in attachments:
                zf.writestr(a.filename, a.content)
        msg.add_attachment(buf.getvalue(), maintype="application", subtype="zip", filename="scripts.zip")
    else:
        for a in attachments:
            maintype, _, subtype = a.mime.partition("/")
            msg.add_attachment(a.content, maintype=maintype, subtype=subtype, filename=a.filename)
    for part in msg.walk():  # drawn now, not each time it is written: the rendered file is what is sent
        if part.is_multipart() and part.get_boundary() is None:
            part.set_boundary(f"=_tierwise_{uuid.uuid4().hex}")
    return msg
