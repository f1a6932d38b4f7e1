"""The `redis_url` fixture: a database of the test's own, empty at the start."""

from __future__ import annotations

import os

import redis


def test_the_redis_database_starts_empty_and_is_usable(redis_url):
    client = redis.Redis.from_url(redis_url)
    try:
        assert client.dbsize() == 0
        client.set("left-behind", "1")
        assert client.get("left-behind") == b"1"
    finally:
        client.close()


def test_the_next_test_does_not_see_what_the_last_one_left(redis_url):
    client = redis.Redis.from_url(redis_url)
    try:
        assert client.get("left-behind") is None
    finally:
        client.close()


def test_the_database_number_is_the_configured_base_plus_the_worker_index(redis_url):
    worker_id = os.environ.get("PYTEST_XDIST_WORKER", "master")
    base = int(os.environ.get("NOTIFIER_TEST_REDIS_DB", "1"))
    index = int(worker_id[2:]) if worker_id.startswith("gw") else 0
    assert redis_url == f"redis://127.0.0.1:6379/{base + index}"
