#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432, trust for user postgres, database `test`) and MariaDB
# (127.0.0.1:3306, root with an empty password, database `test`) answer. Idempotent: installs
# and starts only what is missing, as a new user on a fresh machine of this kind would.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq; apt_updated=1; fi
  apt-get install -y -qq "$@" >/dev/null
}

# --- PostgreSQL -------------------------------------------------------------------------------
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "databases: installing PostgreSQL"
  apt_install postgresql
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  if [ -z "$version" ]; then
    version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
    pg_createcluster "$version" main >/dev/null
  fi
  echo "databases: starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || pg_ctlcluster "$version" main start
  for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi
if ! psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
  # A fresh cluster asks for passwords on TCP: trust local TCP connections (test machines only).
  hba=$(ls /etc/postgresql/*/main/pg_hba.conf | sort -V | tail -n 1)
  sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
  runuser -u postgres -- psql -Atqc 'select pg_reload_conf()' >/dev/null
  sleep 1
fi
# The readonly tests plant dblink and postgres_fdw objects: contrib ships inside postgresql-NN on
# Debian, as a separate package elsewhere.
if ! psql -h 127.0.0.1 -U postgres -d postgres -Atqc "select 1 from pg_available_extensions where name = 'dblink'" | grep -q 1; then
  echo "databases: installing PostgreSQL contrib (dblink, postgres_fdw)"
  apt_install postgresql-contrib
fi
psql -h 127.0.0.1 -U postgres -d postgres -Atqc "select 1 from pg_database where datname = 'test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -d postgres -qc 'create database test' >/dev/null

# --- MariaDB ----------------------------------------------------------------------------------
if ! command -v mariadbd >/dev/null 2>&1; then
  echo "databases: installing MariaDB"
  apt_install mariadb-server
fi
if ! mariadb-admin -h 127.0.0.1 -P 3306 -uroot ping >/dev/null 2>&1 && ! mariadb-admin ping >/dev/null 2>&1; then
  install -d -o mysql -g mysql /run/mysqld
  if [ -z "$(ls -A /var/lib/mysql 2>/dev/null)" ]; then mariadb-install-db --user=mysql >/dev/null; fi
  echo "databases: starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql --bind-address=127.0.0.1 --port=3306
  for _ in $(seq 1 60); do mariadb-admin ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
if ! mariadb -h 127.0.0.1 -P 3306 -uroot -e 'select 1' >/dev/null 2>&1; then
  # A fresh install lets root in through the unix socket only: allow it on 127.0.0.1 without a password.
  mariadb -uroot -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY ''; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION; FLUSH PRIVILEGES;"
fi
mariadb -h 127.0.0.1 -P 3306 -uroot -e 'CREATE DATABASE IF NOT EXISTS test'
echo "databases: PostgreSQL and MariaDB are up"
