"""Which variables are secrets: a table both ways (the 22 names an attacker found missed, the
usual suspects, credentials in URLs) and the ordinary variables that must stay."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._secrets import child_environment, is_secret, scrub_environment

MISSED_BEFORE = [
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "PGPASSWORD",
    "MYSQL_PWD",
    "SECRET_KEY",
    "SLACK_WEBHOOK_URL",
    "SENTRY_DSN",
    "OPENAI_KEY",
    "SSH_AUTH_SOCK",
    "GPG_PASSPHRASE",
    "PASSPHRASE",
    "APIKEY",
    "PRIVATE_KEY",
    "DB_PASS",
    "FRESHER_NOTIFY_WEBHOOK",
    "ANTHROPIC_API_KEY_OLD",
    "OPENAI_API_KEY_2",
    "SECRET_TOKEN_VALUE",
    "KAGGLE_KEY",
    "NGROK_AUTHTOKEN",
]
"""20 of the issue's 22 are secrets by name; DATABASE_URL and MONGO_URI by value (below)."""

SECRET_NAMES = [
    *MISSED_BEFORE,
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_PRIVATE_TOKEN",
    "CI_JOB_TOKEN",
    "NPM_TOKEN",
    "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "STRIPE_SECRET_KEY",
    "HF_TOKEN",
    "DOCKER_PASSWORD",
    "REDIS_PASSWORD",
    "SMTP_PASSWD",
    "DJANGO_SECRET",
    "JWT_SIGNING_KEY",
    "GPG_AGENT_INFO",
    "FORGEFLARE_NOTIFY_URLS",
    "my_token",
    "Api_Key",
    "KEY",
    "TOKEN",
    "BASIC_AUTH",
]

SECRET_VALUES = [
    ("DATABASE_URL", "postgres://app:hunter2@db.internal:5432/app"),
    ("MONGO_URI", "mongodb://root:example@mongo:27017/?authSource=admin"),
    ("REDIS_URL", "redis://:s3cret@cache:6379/0"),
    ("SENTRY_URL", "https://abc123def@o0.ingest.sentry.io/0"),
    ("BACKUP_TARGET", "s3://AKIA123:wJalr@bucket.example.com/x"),
    ("STATUS_URL", "https://status.example.com/hook?token=abcdef"),
    ("PG_URI", "host=db dbname=app password=hunter2"),
]

ORDINARY = [
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TERM",
    "COLORTERM",
    "SHELL",
    "USER",
    "LOGNAME",
    "PWD",
    "OLDPWD",
    "TMPDIR",
    "TZ",
    "EDITOR",
    "PAGER",
    "GIT_PAGER",
    "LESS",
    "PYTHONPATH",
    "PYTHONUNBUFFERED",
    "PYTHONHASHSEED",
    "VIRTUAL_ENV",
    "NODE_PATH",
    "GOPATH",
    "CARGO_HOME",
    "JAVA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "SSH_TTY",
    "SSH_CONNECTION",
    "GPG_TTY",
    "NO_COLOR",
    "CI",
    "GITHUB_ACTIONS",
    "GITHUB_WORKSPACE",
    "GITHUB_SHA",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "HOSTNAME",
    "SHLVL",
    "KUBECONFIG",
    "AWS_PROFILE",
    "AWS_REGION",
    "ANTHROPIC_API_URL",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_VERSION",
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "MAX_THINKING_TOKENS",
    "TOKENIZERS_PARALLELISM",
    "PASSWORD_STORE_DIR",
    "FORGEFLARE_PASS_ENV",
    "FRESHER_SECURITY_PASS_ENV",
    "FORGEFLARE_KEY_FD",
    "FORGEFLARE_TRUST",
    "FRESHER_RUN_ID",
    "FRESHER_PROJECT_DIR",
]

ORDINARY_VALUES = [
    ("DATABASE_URL", "sqlite:///db.sqlite3"),
    ("MONGO_URI", "mongodb://localhost:27017/app"),
    ("PIP_INDEX_URL", "https://pypi.org/simple"),
    ("HTTPS_PROXY", "http://proxy.internal:3128"),
    # A proxy stays even with a password: the agent's client and the tools need it (README).
    ("HTTPS_PROXY", "http://user:pa55@proxy.internal:3128"),
    ("all_proxy", "socks5://u:p@127.0.0.1:1080"),
    ("HOMEPAGE", "see user@example.com"),
    ("DOCS_URL", "https://docs.example.com/page?lang=en"),
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name: str) -> None:
    assert is_secret(name, "x"), name


@pytest.mark.parametrize(("name", "value"), SECRET_VALUES)
def test_credentials_in_values(name: str, value: str) -> None:
    assert is_secret(name, value), name


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_names_stay(name: str) -> None:
    assert not is_secret(name, "/usr/bin:/bin"), name


@pytest.mark.parametrize(("name", "value"), ORDINARY_VALUES)
def test_ordinary_values_stay(name: str, value: str) -> None:
    assert not is_secret(name, value), name


def test_the_table_is_the_size_it_says() -> None:
    assert len(MISSED_BEFORE) + 2 == 22  # DATABASE_URL and MONGO_URI are in SECRET_VALUES


def test_children_get_the_ordinary_ones_and_passed_secrets() -> None:
    env = {
        "PATH": "/bin",
        "AWS_SECRET_ACCESS_KEY": "a",
        "DATABASE_URL": "postgres://u:p@h/d",
        "GITHUB_TOKEN": "g",
    }
    assert child_environment(env, ["github_token"]) == {"PATH": "/bin", "GITHUB_TOKEN": "g"}
    environ = dict(env)
    removed = scrub_environment(environ)
    assert sorted(removed) == ["AWS_SECRET_ACCESS_KEY", "DATABASE_URL", "GITHUB_TOKEN"]
    assert environ == {"PATH": "/bin"}


@given(st.text(min_size=1, max_size=20), st.text(max_size=60))
def test_a_name_with_token_or_secret_is_always_secret(name: str, value: str) -> None:
    for word in ("TOKEN", "SECRET", "PASSWORD"):
        assert is_secret(f"{name}_{word}_X", value)
