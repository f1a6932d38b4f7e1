"""The TCP proxy forwards to PostgreSQL and breaks on demand: cut, refuse for a while, pause and resume."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.fakes.tcp_proxy import ProxyControl, TcpProxy
from tests.support.processes import ROOT


@pytest.fixture
def postgres(database_url: str) -> dict:
    """Connection settings of the suite's PostgreSQL database (skips on SQLite)."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        pytest.skip("needs PostgreSQL: set NOTIFIER_DATABASE_URL=postgresql://…")
    return {"host": url.host or "127.0.0.1", "port": url.port or 5432, "user": url.username,
            "password": url.password, "dbname": url.database}


@pytest.fixture
def proxy(postgres):
    proxy = TcpProxy(postgres["host"], postgres["port"]).start()
    yield proxy
    proxy.stop()


def connect(postgres: dict, port: int) -> psycopg.Connection:
    return psycopg.connect(**{**postgres, "host": "127.0.0.1", "port": port}, connect_timeout=3, autocommit=True)


def test_queries_go_through_the_proxy(postgres, proxy):
    with connect(postgres, proxy.port) as connection:
        assert connection.execute("SELECT 1").fetchone() == (1,)
    assert proxy.accepted == 1


def test_a_cut_connection_raises_and_a_new_one_works(postgres, proxy):
    connection = connect(postgres, proxy.port)
    assert connection.execute("SELECT 1").fetchone() == (1,)
    assert proxy.cut() == 1
    with pytest.raises(psycopg.OperationalError):
        connection.execute("SELECT 1")
    connection.close()
    with connect(postgres, proxy.port) as fresh:
        assert fresh.execute("SELECT 2").fetchone() == (2,)


def test_new_connections_are_refused_for_a_while_then_accepted(postgres, proxy):
    with connect(postgres, proxy.port) as kept:
        proxy.refuse(0.5)
        with pytest.raises(psycopg.OperationalError, match="refused"):
            connect(postgres, proxy.port)
        assert kept.execute("SELECT 1").fetchone() == (1,), "open connections are not touched by refuse()"
        time.sleep(0.7)
        with connect(postgres, proxy.port) as again:
            assert again.execute("SELECT 1").fetchone() == (1,)


def test_a_paused_proxy_holds_a_query_until_it_resumes(postgres, proxy):
    connection = connect(postgres, proxy.port)
    proxy.pause()
    answers = []
    worker = threading.Thread(target=lambda: answers.append(connection.execute("SELECT 42").fetchone()))
    worker.start()
    time.sleep(0.3)
    assert answers == []
    proxy.resume()
    worker.join(timeout=5)
    assert answers == [(42,)]
    connection.close()


def test_a_down_target_looks_like_a_reset_to_the_client():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    proxy = TcpProxy("127.0.0.1", dead_port).start()
    try:
        with pytest.raises(OSError):
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=3) as client:
                client.sendall(b"hello")
                if not client.recv(10):
                    raise ConnectionError("closed")
    finally:
        proxy.stop()


def test_the_standalone_proxy_is_driven_through_its_control_port(postgres):
    process = subprocess.Popen([sys.executable, "-m", "tests.fakes.tcp_proxy",
                                "--target", f"{postgres['host']}:{postgres['port']}"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        listening = process.stdout.readline()
        control = ProxyControl(process.stdout.readline().split()[-1])
        port = int(listening.split()[3].rpartition(":")[2])
        connection = connect(postgres, port)
        assert connection.execute("SELECT 1").fetchone() == (1,)
        assert control.stats()["open"] == 1
        assert control.cut() == 1
        with pytest.raises(psycopg.OperationalError):
            connection.execute("SELECT 1")
        connection.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0
