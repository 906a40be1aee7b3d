"""Report delivery over STARTTLS and implicit TLS (SMTPS) to a real aiosmtpd on loopback, with a CA
and certificates made here: the message arrives when the certificate verifies against
TIERWISE_SMTP_CA_FILE, and is refused (at once, without retries) when the certificate is
untrusted or names another host."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.mail.send import send
from app.settings import Settings
from tests.conftest import free_port


@dataclass(frozen=True)
class Pem:
    cert: Path
    key: Path


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _issue(
    tmp: Path,
    stem: str,
    cn: str,
    *,
    issuer: tuple[ec.EllipticCurvePrivateKey, x509.Certificate] | None,
    dns: list[str] = (),  # type: ignore[assignment]
    ips: list[str] = (),  # type: ignore[assignment]
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate, Pem]:
    """A CA (issuer None: self-signed) or a server certificate for the given names."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn) if issuer is None else issuer[1].subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                          key_encipherment=False, data_encipherment=False, key_agreement=False,
                          encipher_only=False, decipher_only=False),
            critical=True,
        )  # fmt: skip
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
    else:
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        builder = builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer[1].public_key()),  # type: ignore[arg-type]
            critical=False,
        )
    cert = builder.sign(key if issuer is None else issuer[0], hashes.SHA256())
    pem = Pem(tmp / f"{stem}.crt", tmp / f"{stem}.key")
    pem.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return key, cert, pem


@dataclass(frozen=True)
class Pki:
    ca: Pem  # the CA the sender is told to trust
    good: Pem  # signed by it, for 127.0.0.1 and localhost
    wrong_name: Pem  # signed by it, for another host
    untrusted: Pem  # for localhost, signed by a CA the sender does not know


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    tmp = tmp_path_factory.mktemp("pki")
    ca_key, ca_cert, ca = _issue(tmp, "ca", "tierwise test CA", issuer=None)
    _, _, good = _issue(tmp, "good", "smtp", issuer=(ca_key, ca_cert), dns=["localhost"], ips=["127.0.0.1"])
    _, _, wrong = _issue(tmp, "wrong", "smtp", issuer=(ca_key, ca_cert), dns=["mail.example.test"])
    rogue_key, rogue_cert, _ = _issue(tmp, "rogue-ca", "someone else's CA", issuer=None)
    _, _, untrusted = _issue(tmp, "untrusted", "smtp", issuer=(rogue_key, rogue_cert), dns=["localhost"])
    return Pki(ca, good, wrong, untrusted)


class Inbox:
    """Keeps each message with the TLS version it came over."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str | None]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        ssl_object = server.transport.get_extra_info("ssl_object") if server.transport else None
        version = ssl_object.version() if ssl_object is not None else None
        self.messages.append((envelope.content.decode(errors="replace"), version))
        return "250 OK"


def server_context(pem: Pem) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pem.cert, pem.key)
    return ctx


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Controller] = []

    def start(pem: Pem, *, implicit: bool) -> tuple[Inbox, int]:
        inbox, port = Inbox(), free_port()
        if implicit:  # SMTPS: TLS from the first byte
            controller = Controller(inbox, hostname="127.0.0.1", port=port, ssl_context=server_context(pem))
        else:  # plain SMTP that refuses mail until the client has done STARTTLS
            controller = Controller(inbox, hostname="127.0.0.1", port=port,
                                    tls_context=server_context(pem), require_starttls=True)  # fmt: skip
        controller.start()
        started.append(controller)
        return inbox, port

    yield start
    for controller in started:
        controller.stop()


def settings_for(port: int, tmp_path: Path, **kw: Any) -> Settings:
    base: dict[str, Any] = {"smtp_host": "localhost", "smtp_port": port, "smtp_attempts": 3,
                            "smtp_backoff_s": 0.01, "smtp_timeout_s": 5}  # fmt: skip
    return Settings(database_url=f"sqlite:///{tmp_path / 'tw.db'}", secret_key_file=tmp_path / "k",
                    **{**base, **kw})  # fmt: skip


def message(subject: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "tierwise@example.test", "dba@example.test", subject
    msg.set_content("the weekly placement report")
    return msg


MODES = [
    pytest.param({"smtp_starttls": True}, False, id="starttls"),
    pytest.param({"smtp_ssl": True}, True, id="smtps"),
]


@pytest.mark.parametrize(("mode", "implicit"), MODES)
def test_delivers_over_tls_verified_against_the_configured_ca(
    serve: Any, pki: Pki, tmp_path: Path, mode: dict[str, bool], implicit: bool
) -> None:
    inbox, port = serve(pki.good, implicit=implicit)
    outcome = send(message("over TLS"), settings_for(port, tmp_path, smtp_ca_file=pki.ca.cert, **mode))
    assert outcome.ok and outcome.attempts == 1, outcome
    assert len(inbox.messages) == 1
    body, tls = inbox.messages[0]
    assert "Subject: over TLS" in body and tls is not None and tls.startswith("TLSv1.")


@pytest.mark.parametrize(("mode", "implicit"), MODES)
@pytest.mark.parametrize(
    ("cert", "reason"), [("wrong_name", "Hostname mismatch"), ("untrusted", "unable to get local issuer")]
)
def test_refuses_an_untrusted_certificate_or_another_hosts(
    serve: Any, pki: Pki, tmp_path: Path, mode: dict[str, bool], implicit: bool, cert: str, reason: str
) -> None:
    inbox, port = serve(getattr(pki, cert), implicit=implicit)
    outcome = send(message("must not leave"), settings_for(port, tmp_path, smtp_ca_file=pki.ca.cert, **mode))
    assert not outcome.ok and outcome.error is not None
    assert "SSLCertVerificationError" in outcome.error and reason in outcome.error, outcome.error
    assert outcome.attempts == 1  # a certificate that does not verify is not retried
    assert inbox.messages == []


@pytest.mark.parametrize(("mode", "implicit"), MODES)
def test_without_the_ca_file_the_system_cas_do_not_trust_a_private_ca(
    serve: Any, pki: Pki, tmp_path: Path, mode: dict[str, bool], implicit: bool
) -> None:
    inbox, port = serve(pki.good, implicit=implicit)
    outcome = send(message("must not leave"), settings_for(port, tmp_path, **mode))
    assert not outcome.ok and "CERTIFICATE_VERIFY_FAILED" in (outcome.error or "")
    assert inbox.messages == []


def test_the_server_refuses_mail_without_starttls(serve: Any, pki: Pki, tmp_path: Path) -> None:
    """The STARTTLS server above really requires TLS: a plain session is refused (530)."""
    inbox, port = serve(pki.good, implicit=False)
    outcome = send(message("plain"), settings_for(port, tmp_path))
    assert not outcome.ok and "530" in (outcome.error or "") and inbox.messages == []


def test_a_missing_ca_file_is_reported_without_trying(tmp_path: Path) -> None:
    outcome = send(message("x"), settings_for(free_port(), tmp_path, smtp_starttls=True,
                                               smtp_ca_file=tmp_path / "nope.pem"))  # fmt: skip
    assert not outcome.ok and outcome.attempts == 0
    assert outcome.error is not None and outcome.error.startswith("TIERWISE_SMTP_CA_FILE: FileNotFoundError")
