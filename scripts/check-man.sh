#!/usr/bin/env bash
# Checks the man pages (man/): `mandoc -T lint` must report nothing but the style note about
# source lines over 80 bytes (the sources are wrapped at about 95), and no paragraph may render
# as one word. A font-alternating macro (.BR, .RI, …) joins its arguments without spaces, so a
# sentence put on its line by mistake comes out as "BehindaportalwhoseAPIanswered,…": the
# rendered text (mandoc -T utf8) must have no word over 45 characters that is not a path or URL,
# and no run of 24 or more lowercase letters (no English word or key is that long).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mandoc >/dev/null; then
  echo "check-man: mandoc is missing: run scripts/deps.sh (apt-get install mandoc)" >&2
  exit 1
fi

status=0
for page in man/*.[1-8]; do
  lint=$(mandoc -T lint "$page" 2>&1 | grep -v 'STYLE: input text line longer than 80 bytes' || true)
  if [ -n "$lint" ]; then
    echo "check-man: mandoc -T lint $page:" >&2
    printf '%s\n' "$lint" >&2
    status=1
  fi
  glued=$(MANWIDTH=80 mandoc -T utf8 "$page" | col -b | tr -s ' \t' '\n\n' |
          awk 'length($0) > 45 && $0 !~ /\// { print; next } $0 ~ /[a-z]{24}/ { print }' || true)
  if [ -n "$glued" ]; then
    echo "check-man: $page renders words run together (text on a font macro's line?):" >&2
    printf '  %s\n' $glued >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "check-man: $(ls man/*.[1-8] | wc -l) man pages: mandoc lint clean, no run-together text"
exit "$status"
