#!/usr/bin/env bash
# Installs the Debian 12 packages atlas2kudu needs to build and test.
# Idempotent: packages already present are skipped, so a second run is quick.
set -euo pipefail

packages=(
  build-essential pkg-config meson ninja-build
  libcli11-dev libfmt-dev libsimdjson-dev doctest-dev
  zlib1g-dev libssl-dev openssl libjemalloc-dev
  thrift-compiler libthrift-dev libboost-dev
  libsasl2-dev libsasl2-modules libcurl4-openssl-dev
  # Kerberos: Cyrus's GSSAPI plugin (apply -k on the binary protocol), MIT GSS-API/krb5 headers;
  # for the tests a real KDC: krb5kdc and kdb5_util (krb5-kdc), kadmin.local (krb5-admin-server),
  # kinit (krb5-user).
  libsasl2-modules-gssapi-mit libkrb5-dev
  krb5-kdc krb5-admin-server krb5-user
  python3
  # tests/check_man_options.py formats the man page with groff to catch its warnings.
  groff-base
  # tests/cli/observability: the metrics file scraped by Prometheus's own text parser, and
  # script(1) for a pseudo-terminal (the progress line).
  python3-prometheus-client bsdutils
  # Fuzzing (scripts/test.sh): clang's libFuzzer runtime.
  clang libfuzzer-14-dev
  # tests/sql: a throwaway PostgreSQL server (initdb, pg_ctl, psql; postgres_fdw is part of
  # postgresql-15 on Debian 12, so postgresql-contrib is not needed).
  postgresql
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all build and test packages present" >&2
