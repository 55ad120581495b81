"""The secret names an attacker found reaching hooks in 0.3 (the unit table and the
real-process test share them), and an environment with each backend's keys."""

__all__ = ["KEYS_ENV", "MISSED_IN_0_3"]

MISSED_IN_0_3 = [
    "BW_SESSION",
    "OP_SESSION_my",
    "GH_PAT",
    "GITLAB_PAT",
    "AZURE_DEVOPS_EXT_PAT",
    "DB_PW",
    "tf_var_admin_pw",
    "AUTHORIZATION",
    "HTTP_AUTHORIZATION",
    "DOCKER_AUTH_CONFIG",
    "TS_AUTHKEY",
    "KUBE_CONFIG_DATA",
    "STRIPE_SK",
    "AGE_IDENTITY",
    "CI_JOB_JWT",
    "CI_JOB_JWT_V2",
    "JWT",
    "AZURE_STORAGE_CONNECTION_STRING",
    "SERVICEBUS_CONNECTION_STRING",
    "SQLCONNSTR_main",
    "CUSTOMCONNSTR_store",
    "SLACK_HOOK_URL",
    "TEAMS_HOOK_URL",
    "DISCORD_WEBHOOK",
    "MSTEAMS_WEBHOOK_URL",
    "SESSION_COOKIE",
    "COOKIE",
    "FLASK_SESSION",
    "HEROKU_SESSION_ID",
]
"""The issue's 29: secrets by name now (Azure connection strings and webhook URLs also by
value, below)."""

KEYS_ENV = {
    "PATH": "/bin",
    "ANTHROPIC_API_KEY": "ak",
    "ANTHROPIC_AUTH_TOKEN": "at",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth",
    "OPENAI_API_KEY": "ok",
    "GITHUB_TOKEN": "gh",
}
"""Every backend's keys and one key of no backend (the key channel and the agent's key plan)."""
