"""`python -m notifier …`: the command line for operators, the Procfile and cron."""

from notifier.cli import cli

if __name__ == "__main__":
    cli(prog_name="python -m notifier")
