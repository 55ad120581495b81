"""Which variables are secrets: a table both ways (the 22 and then 29 names an attacker found
missed, the usual suspects, credentials in URLs and values) and the ordinary variables that must
stay, look-alikes included."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.security._secrets import child_environment, is_secret, scrub_environment
from secrets_support import MISSED_IN_0_3

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
    *MISSED_IN_0_3,
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
    # Under any name: what the value carries.
    ("STORAGE", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=bm90IGEga2V5==;"),
    ("SB", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=R;SharedAccessKey=k="),
    ("DB", "Server=tcp:db,1433;Database=app;User ID=app;Password=hunter2;"),
    ("NOTIFY", "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX"),
    ("CHAT", "https://discord.com/api/webhooks/123/abcdef"),
    ("TEAMS", "https://contoso.webhook.office.com/webhookb2/abc@def/IncomingWebhook/1/2"),
    ("LEGACY_TEAMS", "https://outlook.office.com/webhook/abc"),
    ("CLAUDE", "sk-ant-api03-" + "a" * 40),
    ("OPENAI", "sk-proj-" + "A1b2" * 10),
    ("GH", "ghp_" + "a" * 36),
    ("GH2", "github_pat_" + "A" * 40),
    ("GL", "glpat-" + "x" * 20),
    ("SLACK", "xoxb-1234-5678-abcdef"),
    ("ID", "AKIAIOSFODNN7EXAMPLE"),
    ("GOOGLE", "AIza" + "B" * 35),
    ("STRIPE", "sk_live_" + "4" * 24),
    ("REGISTRY", "npm_" + "c" * 36),
    ("HF", "hf_" + "d" * 34),
    ("UPLOAD", "pypi-" + "e" * 60),
    ("AGE", "AGE-SECRET-KEY-1" + "Q" * 58),
    ("KEYDATA", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----"),
    ("ID_TOK", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"),
    ("ARGS", "--header x --key=sk-ant-admin01-" + "z" * 30),
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
    # Look-alikes: lists of names, the desktop's session, git's author.
    "TOX_TESTENV_PASSENV",
    "PASSENV",
    "NOX_PASS_ENV",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "XAUTHORITY",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_ID",
    "XDG_SESSION_CLASS",
    "DBUS_SESSION_BUS_ADDRESS",
    "DESKTOP_SESSION",
    "GNOME_DESKTOP_SESSION_ID",
    "SESSION_MANAGER",
    "TERM_SESSION_ID",
    "PATHEXT",
    "MANPATH",
    "INFOPATH",
    "DISK",
    "TASK",
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
    ("HTTPS_PROXY", "http://proxy.internal:3128"),
    ("no_proxy", "localhost,127.0.0.1,.internal"),
    ("TOX_TESTENV_PASSENV", "GITHUB_TOKEN AWS_SECRET_ACCESS_KEY"),
    ("XDG_SESSION_TYPE", "wayland"),
    ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
    ("PIP_EXTRA", "scikit-learn numpy pandas-stubs"),
    ("TASK_NAME", "task-runner-for-the-nightly-build"),
    ("DISKS", "/dev/sda1 /dev/sdb1 disk-by-uuid-0123456789abcdef"),
    ("WEBSITE", "https://slack.com/intl/en-gb/"),
    ("LESS", "-R --use-color -Dd+r$Du+b"),
    ("GREETING", "Password reset instructions are in README"),
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


_SAFE_WORDS = st.sampled_from(
    ["PATH", "HOME", "DIR", "LANG", "LC", "ALL", "TERM", "USER", "NAME", "EMAIL", "MODE", "LEVEL"]
)
_PLAIN_VALUE = st.text(alphabet="abcdefgh0123456789/:._ ", max_size=40)


@given(st.lists(_SAFE_WORDS, min_size=1, max_size=4), _PLAIN_VALUE)
def test_ordinary_words_and_values_never_make_a_secret(words: list[str], value: str) -> None:
    assert not is_secret("_".join(words), value)


@given(
    st.lists(_SAFE_WORDS, min_size=1, max_size=3),
    st.sampled_from(["sk-ant-api03-", "ghp_", "glpat-", "xoxb-", "github_pat_", "hf_"]),
    st.text(alphabet="abcdefABCDEF0123456789", min_size=40, max_size=48),
    st.sampled_from(["", "Bearer ", "--key=", "x "]),
)
def test_a_known_key_prefix_is_a_secret_under_any_name(
    words: list[str], prefix: str, body: str, before: str
) -> None:
    assert is_secret("_".join(words), f"{before}{prefix}{body}")


@given(
    st.lists(_SAFE_WORDS, max_size=2),
    st.sampled_from(["PASSENV", "XDG_SESSION", "GIT_AUTHOR", "GIT_COMMITTER"]),
    st.text(max_size=40),
)
def test_the_allow_list_wins_over_patterns_and_values(
    words: list[str], lookalike: str, value: str
) -> None:
    name = "_".join([*words, lookalike]) if lookalike == "PASSENV" else f"{lookalike}_X"
    assert not is_secret(name, value)


def test_the_second_table_is_the_size_it_says() -> None:
    assert len(MISSED_IN_0_3) == 29
