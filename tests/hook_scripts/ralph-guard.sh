#!/usr/bin/env bash
# Guard: blocks destructive commands, allows the rest (hook spec R3 example).
input=$(cat)
if grep -q 'rm -rf' <<<"$input"; then
  echo '{"action": "block", "reason": "destructive command detected"}'
else
  echo '{"action": "allow"}'
fi
