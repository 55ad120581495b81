// forgeflare's OpenCode plugin: OpenCode waits out a provider's retry-after silently (an hour
// if told) and `opencode run --format json` streams no sign of it. This prints each retry
// OpenCode schedules as one JSON line on its stdout, so the loop can end a long wait and
// keep the window itself.
export const ForgeflareRetry = async () => ({
  event: async ({ event }) => {
    const status = event?.properties?.status;
    if (event?.type !== "session.status" || status?.type !== "retry") return;
    process.stdout.write(
      JSON.stringify({
        type: "forgeflare.retry",
        timestamp: Date.now(),
        sessionID: event.properties.sessionID,
        attempt: status.attempt,
        message: status.message,
        next: status.next,
      }) + "\n",
    );
  },
});
