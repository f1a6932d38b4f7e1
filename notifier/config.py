"""Settings, read once from the environment and validated before anything starts.

Every setting is an environment variable (documented in docs/configuration.md). A malformed value stops start-up with a
`ConfigError` that names the variable, so an operator never discovers a typo at 6 a.m. on a strike day.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import urlsplit

from notifier.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RETENTION_DAYS = 400
MINIMUM_RETENTION_DAYS = 365  # MFIPPA (O. Reg. 823): personal information that was used is kept at least a year
INSTANCE = ROOT / "instance"
DEV_VAPID_KEY = "vapid_private.pem"  # `make run` writes a development key pair here (`push keygen --instance`)
# The push services of Chrome, Edge and Android (FCM), Firefox (Mozilla autopush), Safari and iOS (Apple) and
# Windows (WNS). A browser supplies the endpoint, so only these origins are ever posted to (no SSRF).
PUSH_SERVICES = ("https://fcm.googleapis.com", "https://updates.push.services.mozilla.com",
                 "https://web.push.apple.com", "https://*.notify.windows.com")
DEV_VAPID_SUBJECT = "mailto:developer@notifier.invalid"  # development only: Apple refuses placeholders
LOOPBACK_PUSH_SERVICES = ("http://127.0.0.1:*", "http://localhost:*")


@dataclass(frozen=True)
class Settings:
    """All settings of one process; built by `Settings.from_env`."""

    boards_file: Path
    database_url: str
    base_url: str
    secret_key: str
    debug: bool = False
    # Development only: keep the checkout's boards.yaml and the published document in step both ways.
    follow_boards_file: bool = False
    instance_dir: Path = INSTANCE
    outbox_dir: Path = INSTANCE / "outbox"
    smtp_url: str | None = None
    mail_from: str = "Notifier <notifier@localhost>"
    sender_name: str = ""
    sender_address: str = ""
    sender_contact: str = ""
    twilio_account_sid: str | None = None
    twilio_auth_token: str | None = None
    twilio_from_number: str | None = None
    twilio_messaging_service_sid: str | None = None
    twilio_api_base_url: str | None = None
    twilio_timeout: float = 10.0
    check_interval: int = 60
    daily_digest_at: time = time(6, 30)
    sms_quiet_hours: tuple[time, time] | None = (time(21, 0), time(7, 0))
    sms_per_second: float = 1.0
    email_per_second: float = 20.0
    sms_validity_seconds: int = 7200
    sms_concurrency: int | None = None  # None: enough for the rate (`delivery.sending.limits`)
    email_concurrency: int | None = None  # None: enough for the rate, at least 2 (`delivery.sending.limits`)
    retry_base_seconds: float = 30.0
    max_attempts: int = 10
    claim_lease_seconds: int = 600
    signup_limit_per_ip: int = 30
    trusted_proxies: int = 0  # proxies in front of the app whose X-Forwarded-* headers are believed
    signup_limit_per_contact: int = 3
    confirmation_sms_per_hour: int = 200
    staff_session_minutes: int = 60 * 12
    health_token: str | None = None  # opens /healthz's details to a caller from elsewhere (a monitor)
    redis_url: str | None = None
    clock_sends: bool = True
    webhooks_allow_private: bool = False  # webhooks to loopback/private addresses and over http (development)
    webhook_timeout: float = 5.0
    webhook_per_second: float = 10.0
    webhooks_per_board: int = 5
    metrics_token: str | None = None  # Bearer token for /metrics; None: loopback only
    metrics_address: tuple[str, int] | None = None  # clock and worker serve their figures here (host, port)
    log_format: str = "text"  # or "json": one JSON object a line on standard error
    retention_days: int = DEFAULT_RETENTION_DAYS
    vapid_private_key: str | None = None  # PEM text; push is off without it
    vapid_subject: str = ""  # mailto: or https: contact sent to push services (RFC 8292)
    push_services: tuple[str, ...] = PUSH_SERVICES  # origins a subscription's endpoint may point at
    push_per_second: float = 200.0
    sms_price: tuple[Decimal, str] | None = None  # per segment, and its currency (ISO 4217): for the preview's cost
    push_concurrency: int | None = None  # None: enough for the rate (`delivery.sending.limits`)
    push_timeout: float = 10.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read and validate settings from `environ` (default: `os.environ`)."""
        env = dict(os.environ if environ is None else environ)
        instance = Path(env.get("NOTIFIER_INSTANCE_DIR") or INSTANCE)
        debug = _flag(env, "NOTIFIER_DEBUG")
        twilio = {
            "twilio_account_sid": env.get("TWILIO_ACCOUNT_SID") or None,
            "twilio_auth_token": env.get("TWILIO_AUTH_TOKEN") or None,
            "twilio_from_number": env.get("TWILIO_FROM_NUMBER") or None,
            "twilio_messaging_service_sid": env.get("TWILIO_MESSAGING_SERVICE_SID") or None,
            "twilio_api_base_url": _url(env, "TWILIO_API_BASE_URL", required=False),
        }
        _check_twilio(twilio)
        settings = cls(
            boards_file=Path(env.get("NOTIFIER_BOARDS_FILE") or ROOT / "boards.yaml"),
            database_url=_database_url(env, instance),
            base_url=(_url(env, "NOTIFIER_BASE_URL", required=False) or "http://localhost:5000").rstrip("/"),
            secret_key=env.get("NOTIFIER_SECRET_KEY") or _local_secret(instance),
            debug=debug,
            follow_boards_file=_flag(env, "NOTIFIER_FOLLOW_BOARDS_FILE", default=debug),
            instance_dir=instance,
            outbox_dir=Path(env.get("NOTIFIER_OUTBOX_DIR") or instance / "outbox"),
            smtp_url=_smtp_url(env),
            mail_from=env.get("NOTIFIER_MAIL_FROM") or "Notifier <notifier@localhost>",
            sender_name=(env.get("NOTIFIER_SENDER_NAME") or "").strip(),
            sender_address=(env.get("NOTIFIER_SENDER_ADDRESS") or "").strip(),
            sender_contact=(env.get("NOTIFIER_SENDER_CONTACT") or "").strip(),
            twilio_timeout=_number(env, "TWILIO_TIMEOUT", 10.0, minimum=0.1),
            check_interval=int(_number(env, "NOTIFIER_CHECK_INTERVAL", 60, minimum=1)),
            daily_digest_at=_clock_time(env, "NOTIFIER_DAILY_DIGEST_AT", "06:30"),
            sms_quiet_hours=_quiet_hours(env),
            sms_per_second=_number(env, "NOTIFIER_SMS_PER_SECOND", 1.0, minimum=0.01),
            email_per_second=_number(env, "NOTIFIER_EMAIL_PER_SECOND", 20.0, minimum=0.01),
            sms_validity_seconds=int(_number(env, "NOTIFIER_SMS_VALIDITY", 7200, minimum=1, maximum=36000)),
            sms_concurrency=_threads(env, "NOTIFIER_SMS_CONCURRENCY"),
            email_concurrency=_threads(env, "NOTIFIER_EMAIL_CONCURRENCY"),
            retry_base_seconds=_number(env, "NOTIFIER_RETRY_BASE_SECONDS", 30.0, minimum=0.01),
            max_attempts=int(_number(env, "NOTIFIER_MAX_ATTEMPTS", 10, minimum=1)),
            claim_lease_seconds=int(_number(env, "NOTIFIER_CLAIM_LEASE", 600, minimum=10)),
            signup_limit_per_ip=int(_number(env, "NOTIFIER_SIGNUP_LIMIT_PER_IP", 30, minimum=1)),
            trusted_proxies=_whole(env, "NOTIFIER_TRUSTED_PROXIES", 0, maximum=5),
            signup_limit_per_contact=int(_number(env, "NOTIFIER_SIGNUP_LIMIT_PER_CONTACT", 3, minimum=1)),
            confirmation_sms_per_hour=int(_number(env, "NOTIFIER_CONFIRMATION_SMS_PER_HOUR", 200, minimum=1)),
            staff_session_minutes=int(_number(env, "NOTIFIER_STAFF_SESSION_MINUTES", 720, minimum=1)),
            health_token=(env.get("NOTIFIER_HEALTH_TOKEN") or "").strip() or None,
            redis_url=_redis_url(env),
            clock_sends=_flag(env, "NOTIFIER_CLOCK_SENDS", default=True),
            webhooks_allow_private=_flag(env, "NOTIFIER_WEBHOOKS_ALLOW_PRIVATE", default=debug),
            webhook_timeout=_number(env, "NOTIFIER_WEBHOOK_TIMEOUT", 5.0, minimum=0.1, maximum=30),
            webhook_per_second=_number(env, "NOTIFIER_WEBHOOK_PER_SECOND", 10.0, minimum=0.01),
            webhooks_per_board=int(_number(env, "NOTIFIER_WEBHOOKS_PER_BOARD", 5, minimum=1, maximum=1000)),
            metrics_token=(env.get("NOTIFIER_METRICS_TOKEN") or "").strip() or None,
            metrics_address=_metrics_address(env),
            log_format=_log_format(env),
            retention_days=_retention_days(env, debug),
            vapid_private_key=_vapid_key(env, instance, debug),
            vapid_subject=(env.get("NOTIFIER_VAPID_SUBJECT") or "").strip() or (DEV_VAPID_SUBJECT if debug else ""),
            push_services=_push_services(env, debug),
            push_per_second=_number(env, "NOTIFIER_PUSH_PER_SECOND", 200.0, minimum=0.01),
            sms_price=_price(env, "NOTIFIER_SMS_PRICE"),
            push_concurrency=_threads(env, "NOTIFIER_PUSH_CONCURRENCY"),
            push_timeout=_number(env, "NOTIFIER_PUSH_TIMEOUT", 10.0, minimum=0.1, maximum=60),
            **twilio,
        )
        _check_lease(settings)
        _check_push(settings)
        return settings

    @property
    def sender(self) -> dict[str, str]:
        """Who sends the messages, for every email's footer (CASL: name, mailing address, a way to reach us)."""
        from email.utils import parseaddr

        name = self.sender_name or parseaddr(self.mail_from)[0] or parseaddr(self.mail_from)[1]
        return {"name": name, "address": self.sender_address, "contact": self.sender_contact}

    @property
    def sms_configured(self) -> bool:
        """True when Twilio credentials are given, so texts go to Twilio rather than the local outbox."""
        return bool(self.twilio_account_sid and self.twilio_auth_token)

    @property
    def email_configured(self) -> bool:
        """True when an SMTP server is given, so email goes out rather than to the local outbox."""
        return bool(self.smtp_url)

    @property
    def push_configured(self) -> bool:
        """True when a VAPID key is given: Web Push is on and the page offers "Get alerts on this device"."""
        return bool(self.vapid_private_key)


def log_secrets(settings: Settings) -> list[str]:
    """The secrets no log line may hold: the Twilio auth token, the SMTP and Redis passwords, the secret key, the
    health and metrics tokens, the VAPID key."""
    found = [settings.twilio_auth_token, settings.secret_key, settings.health_token, settings.metrics_token,
             settings.vapid_private_key]
    for url in (settings.smtp_url, settings.redis_url, settings.database_url):
        if url:
            try:
                found.append(urlsplit(url).password)
            except ValueError:
                pass
    return [s for s in found if s]


def _flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    value = (env.get(name) or "").strip().lower()
    if value == "":
        return default
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(f"{name}={value!r}: expected 1/0, true/false, yes/no or on/off")


def _number(env: Mapping[str, str], name: str, default: float, minimum: float, maximum: float | None = None) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected a number") from None
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"at least {minimum:g}" + (f" and at most {maximum:g}" if maximum is not None else "")
        raise ConfigError(f"{name}={raw!r}: must be {bounds}")
    return value


def _price(env: Mapping[str, str], name: str) -> tuple[Decimal, str] | None:
    """A price and its currency, "0.0083 USD": the amount (a dot for decimals) then an ISO 4217 code."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    parts = raw.split()
    try:
        amount = Decimal(parts[0]) if len(parts) == 2 else None
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite() or amount < 0 or not (
            len(parts[1]) == 3 and parts[1].isascii() and parts[1].isalpha()):
        raise ConfigError(f"{name}={raw!r}: expected a price per segment and its currency code, "
                          "such as 0.0083 USD")
    return amount, parts[1].upper()


def _whole(env: Mapping[str, str], name: str, default: int, maximum: int) -> int:
    value = _number(env, name, default, minimum=0, maximum=maximum)
    if value != int(value):
        raise ConfigError(f"{name}={env.get(name)!r}: expected a whole number")
    return int(value)


def _threads(env: Mapping[str, str], name: str) -> int | None:
    """Sending threads per process, 1 to 64; None when unset (enough for the rate: `delivery.sending.limits`)."""
    return int(_number(env, name, 0, minimum=1, maximum=64)) or None


def _metrics_address(env: Mapping[str, str]) -> tuple[str, int] | None:
    """NOTIFIER_METRICS_PORT as PORT (loopback) or HOST:PORT; None when unset."""
    name = "NOTIFIER_METRICS_PORT"
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    host, _, port = raw.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{name}={raw!r}: expected a port such as 9101, or HOST:PORT such as 0.0.0.0:9101")
    return (host.strip("[]") or "127.0.0.1", int(port))


def _log_format(env: Mapping[str, str]) -> str:
    raw = (env.get("NOTIFIER_LOG_FORMAT") or "text").strip().lower()
    if raw not in ("text", "json"):
        raise ConfigError(f"NOTIFIER_LOG_FORMAT={raw!r}: expected text or json")
    return raw


def _retention_days(env: Mapping[str, str], debug: bool) -> int:
    """Days settled deliveries and history are kept; below a year only in development (NOTIFIER_DEBUG)."""
    name = "NOTIFIER_RETENTION_DAYS"
    days = _whole(env, name, DEFAULT_RETENTION_DAYS, maximum=36500)
    if days < MINIMUM_RETENTION_DAYS and not debug:
        raise ConfigError(f"{name}={days}: must be at least {MINIMUM_RETENTION_DAYS} (personal information that "
                          "was used is kept at least a year, MFIPPA); shorter only with NOTIFIER_DEBUG=1")
    return max(days, 1)


def _url(env: Mapping[str, str], name: str, required: bool) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        if required:
            raise ConfigError(f"{name} is required")
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{name}={raw!r}: expected an http:// or https:// URL")
    return raw


def _smtp_url(env: Mapping[str, str]) -> str | None:
    raw = (env.get("NOTIFIER_SMTP_URL") or "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ConfigError("NOTIFIER_SMTP_URL: expected smtp://user:pass@host:587 or smtps://user:pass@host:465")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigError("NOTIFIER_SMTP_URL: the port is not a number") from None
    return raw


def _redis_url(env: Mapping[str, str]) -> str | None:
    raw = (env.get("NOTIFIER_REDIS_URL") or "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("redis", "rediss", "unix") or not (parts.hostname or parts.path):
        raise ConfigError(f"NOTIFIER_REDIS_URL={_hide_password(raw)!r}: expected redis://HOST:PORT/DB, "
                          "e.g. redis://127.0.0.1:6379/0 (rediss:// for TLS)")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
        database = parts.path.strip("/")
        if parts.scheme != "unix" and database and not database.isdigit():
            raise ValueError
    except ValueError:
        raise ConfigError(f"NOTIFIER_REDIS_URL={_hide_password(raw)!r}: the port and database must be numbers, "
                          "e.g. redis://127.0.0.1:6379/0") from None
    return raw


def _database_url(env: Mapping[str, str], instance: Path) -> str:
    raw = (env.get("NOTIFIER_DATABASE_URL") or "").strip()
    if not raw:
        return f"sqlite:///{instance / 'notifier.sqlite3'}"
    scheme = raw.split(":", 1)[0]
    if not scheme.startswith(("sqlite", "postgresql", "postgres")) or "://" not in raw:
        raise ConfigError(
            f"NOTIFIER_DATABASE_URL={_hide_password(raw)!r}: expected sqlite:///PATH or postgresql://HOST/DB"
        )
    if raw.startswith("postgres://") or raw.startswith("postgresql://"):
        # Hosting platforms hand out postgres:// URLs; SQLAlchemy wants an explicit driver.
        raw = "postgresql+psycopg://" + raw.split("://", 1)[1]
    return raw


def _hide_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def _clock_time(env: Mapping[str, str], name: str, default: str) -> time:
    raw = (env.get(name) or default).strip()
    try:
        hours, minutes = raw.split(":")
        return time(int(hours), int(minutes))
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected a time of day as HH:MM, e.g. 06:30") from None


def _quiet_hours(env: Mapping[str, str]) -> tuple[time, time] | None:
    name = "NOTIFIER_SMS_QUIET_HOURS"
    raw = env.get(name, "21:00-07:00").strip()
    if not raw:
        return None
    try:
        start, end = raw.split("-")
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected HH:MM-HH:MM, e.g. 21:00-07:00, or empty to disable") from None
    return (_clock_time({name: start}, name, start), _clock_time({name: end}, name, end))


def _check_twilio(twilio: Mapping[str, str | None]) -> None:
    sid, token = twilio["twilio_account_sid"], twilio["twilio_auth_token"]
    if bool(sid) != bool(token):
        raise ConfigError("TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN must be given together")
    if sid and not (sid.startswith("AC") and len(sid) == 34):
        raise ConfigError("TWILIO_ACCOUNT_SID: expected 'AC' followed by 32 characters")
    if sid and not (twilio["twilio_from_number"] or twilio["twilio_messaging_service_sid"]):
        raise ConfigError("TWILIO_FROM_NUMBER or TWILIO_MESSAGING_SERVICE_SID is required with TWILIO_ACCOUNT_SID")
    sender = twilio["twilio_from_number"]
    if sender and not (sender.startswith("+") and sender[1:].isdigit()):
        raise ConfigError(f"TWILIO_FROM_NUMBER={sender!r}: expected an E.164 number such as +14165550100")


def _check_lease(settings: Settings) -> None:
    """A sender renews a claim older than half the lease before it sends: the rest of the lease must outlast the
    provider's answer, or a slow answer lets another process take the row back and send it again."""
    if settings.claim_lease_seconds < 2 * settings.twilio_timeout:
        raise ConfigError(f"NOTIFIER_CLAIM_LEASE={settings.claim_lease_seconds}: must be at least twice "
                          f"TWILIO_TIMEOUT ({settings.twilio_timeout:g} s), or a slow answer could be sent twice")


def _vapid_key(env: Mapping[str, str], instance: Path, debug: bool) -> str | None:
    """NOTIFIER_VAPID_PRIVATE_KEY as PEM text, whether given as the text itself or as the path of a PEM file; in
    development (NOTIFIER_DEBUG) the key `make run` wrote under instance/ when none is given."""
    name = "NOTIFIER_VAPID_PRIVATE_KEY"
    raw = (env.get(name) or "").strip()
    if not raw:
        local = instance / DEV_VAPID_KEY
        return local.read_text() if debug and local.exists() else None
    if "-----BEGIN" not in raw:
        try:
            raw = Path(raw).expanduser().read_text()
        except OSError as error:
            raise ConfigError(f"{name}: neither PEM text nor a readable PEM file ({error.strerror})") from None
    if "PRIVATE KEY-----" not in raw:
        raise ConfigError(f"{name}: expected a PEM private key (python -m notifier push keygen prints one)")
    return raw.replace("\\n", "\n").strip() + "\n"


def _push_services(env: Mapping[str, str], debug: bool) -> tuple[str, ...]:
    """NOTIFIER_PUSH_SERVICES: comma-separated origins (scheme://host[:port], `*.` before a host for its
    subdomains, `:*` for any port); in development loopback is added so a local push service can be used."""
    name = "NOTIFIER_PUSH_SERVICES"
    raw = env.get(name)
    origins = PUSH_SERVICES if raw is None or not raw.strip() else tuple(
        o.strip().rstrip("/") for o in raw.split(",") if o.strip())
    for origin in origins:
        parts = urlsplit(origin.replace("*.", "wildcard.").replace(":*", ""))
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
            raise ConfigError(f"{name}: {origin!r} is not an origin such as https://fcm.googleapis.com")
    if debug:
        origins = tuple(dict.fromkeys((*origins, *LOOPBACK_PUSH_SERVICES)))
    return origins


def _check_push(settings: Settings) -> None:
    """With push on, the key must load and the contact must be one a push service accepts (RFC 8292 `sub`)."""
    if not settings.vapid_private_key:
        return
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(settings.vapid_private_key.encode(), password=None)
    except (ValueError, TypeError):
        raise ConfigError("NOTIFIER_VAPID_PRIVATE_KEY: the PEM key cannot be read") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ConfigError("NOTIFIER_VAPID_PRIVATE_KEY: expected a P-256 (prime256v1) EC key")
    subject = settings.vapid_subject
    if not (subject.startswith("mailto:") and "@" in subject or subject.startswith("https://")):
        raise ConfigError("NOTIFIER_VAPID_SUBJECT is required with NOTIFIER_VAPID_PRIVATE_KEY: a mailto: address "
                          "or an https: URL where the push services can reach the operator")


def _local_secret(instance: Path) -> str:
    """A per-installation key kept in instance/, so `make run` works without settings and links survive restarts."""
    path = instance / "secret_key"
    if path.exists():
        return path.read_text().strip()
    instance.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # the web and clock processes started together; the other one wrote it
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
