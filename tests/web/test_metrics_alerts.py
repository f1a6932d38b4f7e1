"""The alerts docs/operating.md gives are Prometheus rules that parse and name only metrics /metrics serves."""

from __future__ import annotations

import re

import yaml

from notifier.config import ROOT
from tests.web.test_metrics import samples


def _rules() -> list[dict]:
    text = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
    block = re.search(r"Alerts worth setting.*?```yaml\n(.*?)```", text, re.DOTALL).group(1)
    return [rule for group in yaml.safe_load(block)["groups"] for rule in group["rules"]]


def test_the_documented_alerts_parse_as_prometheus_rule_groups():
    rules = _rules()
    assert {"NotifierMessagesWaiting", "NotifierChannelPaused", "NotifierNoCycle"} <= {r["alert"] for r in rules}
    assert all(rule["expr"] and rule["annotations"]["summary"] for rule in rules)


def test_the_documented_alerts_name_only_metrics_that_are_served(client, run):
    run()  # a cycle, so that its age is reported
    served = {name.removesuffix("_total") for name, _ in samples(client.get("/metrics"))}
    named = {name.removesuffix("_total") for rule in _rules() for name in re.findall(r"notifier_\w+", rule["expr"])}
    assert named <= served
