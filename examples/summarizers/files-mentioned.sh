#!/bin/sh
# A tiny summarizer program for compactor (docs/command-summarizer.md): the
# request is JSON on stdin; the summary is plain text on stdout. This one
# lists every file path the compacted messages mention, and the user's last
# request. A real one would call a model; see openai_summarizer.py.
request=$(cat)
echo "## Files mentioned so far"
printf "%s" "$request" | sed -e "s/\\\\[nrt]/ /g" \
  | grep -oE '[A-Za-z0-9_.-]*(/[A-Za-z0-9_.-]+)+\.[A-Za-z0-9]{1,8}' \
  | sort -u | head -n 60 | sed 's/^/- /'
echo
echo "## Budget"
printf '%s' "$request" | grep -oE '"budget_tokens": ?[0-9]+' | head -n 1
