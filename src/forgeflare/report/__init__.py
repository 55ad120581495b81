"""The morning after: run summaries, the report, watching a loop, notifications."""

from forgeflare.report._notify import (
    NOTIFY_EVENTS,
    NOTIFY_URLS_ENV,
    Notifier,
    notify_urls,
    render_message,
    should_notify,
)

__all__ = [
    "NOTIFY_EVENTS",
    "NOTIFY_URLS_ENV",
    "Notifier",
    "notify_urls",
    "render_message",
    "should_notify",
]
