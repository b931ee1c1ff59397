#!/usr/bin/env bash
# Prints the Debian archive mirror that this machine's apt sources use, read only from active
# source lines: `URIs:` fields of deb822 `.sources` stanzas of Types deb, and `deb` lines of
# one-line `.list` files. Comments, disabled stanzas (Enabled: no), deb-src-only entries and
# the security archive are ignored. Prints nothing and exits 1 when no active Debian mirror
# is configured.
# Usage: debian-mirror.sh [APT_DIR]   (default /etc/apt; reads sources.list and sources.list.d/)
set -uo pipefail
apt_dir=${1:-/etc/apt}

files=()
[ -f "$apt_dir/sources.list" ] && files+=("$apt_dir/sources.list")
# apt reads sources.list.d in name order, whatever the extension.
for f in "$apt_dir"/sources.list.d/*; do
  case "$f" in *.list | *.sources) [ -f "$f" ] && files+=("$f") ;; esac
done

candidates() {
  local f
  for f in "${files[@]}"; do
    case "$f" in
      *.sources)
        # deb822: stanzas separated by blank lines; fields may continue on indented lines.
        awk '
          function flush() {
            if (types ~ /(^| )deb( |$)/ && enabled !~ /^(no|false)$/) {
              n = split(uris, u, /[ \t]+/)
              for (i = 1; i <= n; i++) if (u[i] != "") print u[i]
            }
            types = ""; uris = ""; enabled = ""; field = ""
          }
          /^[ \t]*#/ { next }
          /^[ \t]*$/ { flush(); next }
          /^[ \t]/ { if (field == "uris") uris = uris " " $0; else if (field == "types") types = types " " $0; next }
          {
            line = $0
            key = tolower(substr(line, 1, index(line, ":") - 1))
            value = substr(line, index(line, ":") + 1)
            gsub(/^[ \t]+|[ \t]+$/, "", value)
            field = key
            if (key == "uris") uris = value
            else if (key == "types") types = value
            else if (key == "enabled") enabled = tolower(value)
          }
          END { flush() }
        ' "$f"
        ;;
      *)
        # One-line format: deb [options] URI suite [components...]
        awk '
          /^[ \t]*#/ { next }
          $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            if (i <= NF) print $i
          }
        ' "$f"
        ;;
    esac
  done
}

# A Debian archive (not the security archive, not a third-party repository): the path ends in
# /debian, optionally after a snapshot-style prefix.
mirror=$(candidates | grep -E '^(https?|file|mirror\+https?)://' | grep -E '/debian/?$' | head -n 1)
if [ -z "$mirror" ]; then
  exit 1
fi
echo "${mirror%/}"
