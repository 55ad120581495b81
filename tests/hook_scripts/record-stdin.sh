#!/usr/bin/env bash
# Observer: appends its stdin (one JSON object) as a line to the file named by $1.
cat >> "$1"
echo >> "$1"
echo '{}'
