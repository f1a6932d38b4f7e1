"""`python -m notifier push …`: Web Push keys. `keygen` prints a new VAPID key pair (`--instance`: writes the
development key `make run` uses, once)."""

from __future__ import annotations

import os
from pathlib import Path

import click
from py_vapid import Vapid02

from notifier.config import DEV_VAPID_KEY, INSTANCE
from notifier.delivery.channels.push import public_key


def new_private_pem() -> str:
    """A new P-256 private key as PEM (PKCS#8) text."""
    vapid = Vapid02()
    vapid.generate_keys()
    return vapid.private_pem().decode()


@click.group("push")
def push_group() -> None:
    """Web Push: the VAPID keys that sign every notification."""


@push_group.command("keygen")
@click.option("--instance", "write_instance", is_flag=True,
              help="Write a development key to instance/vapid_private.pem if there is none (make run).")
def keygen(write_instance: bool) -> None:
    """Print a new VAPID key pair: the private key (PEM, for NOTIFIER_VAPID_PRIVATE_KEY) and the public key."""
    if write_instance:
        folder = Path(os.environ.get("NOTIFIER_INSTANCE_DIR") or INSTANCE)
        path = folder / DEV_VAPID_KEY
        if path.exists():
            return
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(new_private_pem())
        click.echo(f"wrote a development Web Push key to {path}")
        return
    pem = new_private_pem()
    click.echo("# NOTIFIER_VAPID_PRIVATE_KEY (keep it secret; a new key ends every subscription):")
    click.echo(pem.rstrip())
    click.echo(f"# public key (what GET /api/push/key answers): {public_key(pem)}")
