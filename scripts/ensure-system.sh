#!/usr/bin/env bash
# Installs the Debian packages the test suite needs (ODBC + FreeTDS for the driver tests, Chromium for
# the browser tests) and makes sure PostgreSQL listens on 127.0.0.1:5432.
set -euo pipefail

need=()
fresh_postgres=0
for pkg in unixodbc tdsodbc chromium fonts-dejavu-core; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
command -v pg_ctlcluster >/dev/null 2>&1 || need+=(postgresql)
command -v pg_isready >/dev/null 2>&1 || need+=(postgresql-client)

if [ "${#need[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
  fresh_postgres=1
fi

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "starting PostgreSQL"
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  if [ -z "$version" ]; then echo "no PostgreSQL cluster found under /etc/postgresql" >&2; exit 1; fi
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  pg_isready -h 127.0.0.1 -p 5432
fi

# A cluster installed just now authenticates TCP logins by password: give the test user the
# password the tests use (TIERWISE_TEST_POSTGRES_URL); a trust-auth cluster ignores it.
if [ "${fresh_postgres:-0}" = 1 ]; then
  su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\"" || true
fi
