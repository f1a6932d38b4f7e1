"""What a process tells its operators: its log lines' format (`logs`) and its own Prometheus figures (`metrics`).

Part of the shared kernel: every wing and process uses it. May import the kernel (`notifier.masking`) and
prometheus_client, nothing else of this project.
"""
